// cuBLAS handles and status: one handle per (thread, device, slot), created on first use
// and kept for the life of the process (a handle is not thread safe, and destroying it at
// exit could outlive the driver); cublasStatus_t turned into a Status.
//
// Slots let one thread drive two streams at once (e.g. a main and an auxiliary stream of
// one op) without rebinding a shared handle between their calls. Every handle is set up
// for reproducible strict-f32 results: CUBLAS_DEFAULT_MATH (no TF32 unless a call asks
// for it through its compute type) and CUBLAS_ATOMICS_NOT_ALLOWED (no split-K reductions
// through atomics, so a fixed problem gives bit-identical results).
#pragma once

#include <cublas_v2.h>

#include <string_view>

#include "core/status.h"

namespace opsched::cublas {

inline constexpr int kSlots = 4;

// The calling thread's handle in `slot` (0 <= slot < kSlots) for the current CUDA
// device, bound to `stream`. Binding resets the handle to cuBLAS's default workspace
// pool, which cuBLAS keeps per stream, so work on two overlapping streams never shares
// a workspace (one buffer of our own per handle would; one per stream would pile up as
// callers create and destroy streams).
StatusOr<cublasHandle_t> Handle(cudaStream_t stream, int slot = 0);

Status ToStatus(cublasStatus_t status, std::string_view call);

}  // namespace opsched::cublas

#define OPSCHED_CUBLAS_RETURN_IF_ERROR(call) OPSCHED_RETURN_IF_ERROR(::opsched::cublas::ToStatus((call), #call))
