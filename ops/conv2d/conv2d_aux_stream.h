// The auxiliary stream of a two-stream backward pass (MXNet #14006): the filter gradient
// runs there while the data gradient runs on the caller's stream. One set — the stream
// and its fork and join events — per (thread, device), made on first use and kept for the
// life of the process, so a call allocates nothing once warm and never destroys a stream
// that queued work may still use. Shared by every backward implementation with a
// `streams` knob (own GEMMs, cuDNN legacy and graph APIs).
#pragma once

#include <cuda_runtime.h>

#include <algorithm>
#include <cstddef>
#include <string_view>

#include "core/gpu/gpu_status.h"
#include "core/status.h"

namespace opsched::conv2d {

struct AuxStream {
  cudaStream_t stream = nullptr;
  cudaEvent_t fork = nullptr;  // recorded on the caller's stream: the inputs are ready
  cudaEvent_t join = nullptr;  // recorded on the aux stream: its work is queued before it
};

// The calling thread's set for its current device.
StatusOr<AuxStream> ThreadAuxStream();

// The handle slot (cuDNN, cuBLAS) of work on the auxiliary stream; slot 0 serves the
// caller's stream.
inline constexpr int kAuxHandleSlot = 1;

// How the two gradients of a backward pass share one workspace: on one stream they take
// turns (the larger need); on two, each has its own part, the filter gradient's from the
// first 256-byte boundary after the data gradient's.
inline size_t FilterWorkspaceOffset(size_t data_bytes) { return (data_bytes + 255) / 256 * 256; }
inline size_t BackwardWorkspaceBytes(size_t data_bytes, size_t filter_bytes, int streams) {
  return streams == 2 ? FilterWorkspaceOffset(data_bytes) + filter_bytes : std::max(data_bytes, filter_bytes);
}

// Queues `on_aux(aux_stream)` after the work already on `main`, then `on_main()`, then
// makes `main` wait for the aux stream — joined whatever the two returned, so `main`
// never runs ahead of work queued on the aux stream, and a workspace used on both is
// free again once `main` passes this point. No host synchronisation. Returns the first
// error (the aux part's first).
template <typename OnAux, typename OnMain>
Status ForkJoin(cudaStream_t main, std::string_view who, OnAux&& on_aux, OnMain&& on_main) {
  OPSCHED_ASSIGN_OR_RETURN(const AuxStream aux, ThreadAuxStream());
  OPSCHED_GPU_RETURN_IF_ERROR(cudaEventRecord(aux.fork, main), who);
  OPSCHED_GPU_RETURN_IF_ERROR(cudaStreamWaitEvent(aux.stream, aux.fork, 0), who);
  const Status aux_status = on_aux(aux.stream);
  const Status main_status = on_main();
  OPSCHED_GPU_RETURN_IF_ERROR(cudaEventRecord(aux.join, aux.stream), who);
  OPSCHED_GPU_RETURN_IF_ERROR(cudaStreamWaitEvent(main, aux.join, 0), who);
  OPSCHED_RETURN_IF_ERROR(aux_status);
  return main_status;
}

}  // namespace opsched::conv2d
