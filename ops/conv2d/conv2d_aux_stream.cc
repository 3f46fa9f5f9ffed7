#include "ops/conv2d/conv2d_aux_stream.h"

#include <absl/container/flat_hash_map.h>

namespace opsched::conv2d {
namespace {

void Destroy(const AuxStream& aux) {
  if (aux.join != nullptr) cudaEventDestroy(aux.join);
  if (aux.fork != nullptr) cudaEventDestroy(aux.fork);
  if (aux.stream != nullptr) cudaStreamDestroy(aux.stream);
}

Status Create(AuxStream* aux) {
  // Non-blocking: ordering with the caller's stream comes from the two events only, even
  // when the caller uses the legacy default stream.
  OPSCHED_GPU_RETURN_IF_ERROR(cudaStreamCreateWithFlags(&aux->stream, cudaStreamNonBlocking), "conv2d aux stream");
  OPSCHED_GPU_RETURN_IF_ERROR(cudaEventCreateWithFlags(&aux->fork, cudaEventDisableTiming), "conv2d fork event");
  OPSCHED_GPU_RETURN_IF_ERROR(cudaEventCreateWithFlags(&aux->join, cudaEventDisableTiming), "conv2d join event");
  return absl::OkStatus();
}

}  // namespace

StatusOr<AuxStream> ThreadAuxStream() {
  thread_local absl::flat_hash_map<int, AuxStream> streams;  // by device
  int device = 0;
  OPSCHED_GPU_RETURN_IF_ERROR(cudaGetDevice(&device), "conv2d aux stream");
  if (auto it = streams.find(device); it != streams.end()) return it->second;
  AuxStream aux;
  if (Status s = Create(&aux); !s.ok()) {
    Destroy(aux);  // nothing was queued on a half-made set
    return s;
  }
  streams.emplace(device, aux);
  return aux;
}

}  // namespace opsched::conv2d
