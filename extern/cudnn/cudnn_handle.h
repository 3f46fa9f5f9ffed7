// cuDNN handles and status: one handle per (thread, device, slot), created on first use
// and kept for the life of the process (a handle is not thread safe, and destroying it
// at exit could outlive the driver); cudnnStatus_t turned into a Status.
#pragma once

#include <cudnn.h>

#include <string_view>

#include "core/status.h"

namespace opsched::cudnn {

// The calling thread's handle for the current CUDA device, bound to `stream`. Slot 0 is
// the ordinary handle; other slots are further handles of the same thread and device,
// for an implementation that keeps two cuDNN calls in flight on two streams at once
// (each handle stays bound to its own stream instead of being rebound between calls).
StatusOr<cudnnHandle_t> Handle(cudaStream_t stream, int slot = 0);

Status ToStatus(cudnnStatus_t status, std::string_view call);

}  // namespace opsched::cudnn

#define OPSCHED_CUDNN_RETURN_IF_ERROR(call) OPSCHED_RETURN_IF_ERROR(::opsched::cudnn::ToStatus((call), #call))
