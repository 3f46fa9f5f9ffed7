// cuDNN handles and status: one handle per (thread, device), created on first use and
// kept for the life of the process (a handle is not thread safe, and destroying it at
// exit could outlive the driver); cudnnStatus_t turned into a Status.
#pragma once

#include <cudnn.h>

#include <string_view>

#include "core/status.h"

namespace opsched::cudnn {

// The calling thread's handle for the current CUDA device, bound to `stream`.
StatusOr<cudnnHandle_t> Handle(cudaStream_t stream);

Status ToStatus(cudnnStatus_t status, std::string_view call);

}  // namespace opsched::cudnn

#define OPSCHED_CUDNN_RETURN_IF_ERROR(call) OPSCHED_RETURN_IF_ERROR(::opsched::cudnn::ToStatus((call), #call))
