// A process-wide cache of what cuDNN answers about one workload on one device (the
// algorithms or engines it supports, with their workspaces): asked on first use, then
// served to every thread. Entries are never erased and the cache is never destroyed, so
// the pointers handed out stay valid for the life of the process, static destruction
// included. Failures are returned, not cached.
#pragma once

#include <cuda_runtime.h>

#include <cstdint>
#include <memory>
#include <mutex>
#include <string_view>
#include <utility>

#include "absl/container/flat_hash_map.h"
#include "core/gpu/gpu_status.h"
#include "core/status.h"

namespace opsched::conv2d {

template <typename Answer>
class DeviceQueryCache {
 public:
  // The answer for (the calling thread's current device, `workload_hash`); `ask()`
  // (returning StatusOr<Answer>) computes it on a miss. Asked outside the lock: a first
  // query takes milliseconds and must not stall other threads' lookups. Two threads
  // racing on one workload compute equal answers; the first stored wins.
  template <typename Ask>
  StatusOr<const Answer*> Get(uint64_t workload_hash, std::string_view what, Ask&& ask) {
    int device = 0;
    OPSCHED_GPU_RETURN_IF_ERROR(cudaGetDevice(&device), what);
    const std::pair<int, uint64_t> key{device, workload_hash};
    {
      std::lock_guard<std::mutex> lock(mutex_);
      if (auto it = answers_.find(key); it != answers_.end()) return it->second.get();
    }
    OPSCHED_ASSIGN_OR_RETURN(Answer answer, ask());
    std::lock_guard<std::mutex> lock(mutex_);
    const auto it = answers_.try_emplace(key, std::make_unique<const Answer>(std::move(answer))).first;
    return it->second.get();
  }

 private:
  std::mutex mutex_;
  absl::flat_hash_map<std::pair<int, uint64_t>, std::unique_ptr<const Answer>> answers_;
};

}  // namespace opsched::conv2d
