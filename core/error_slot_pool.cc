#include "core/error_slot_pool.h"

#include <atomic>
#include <cstdlib>

#include "core/gpu/gpu_backend.h"
#include "core/log.h"

namespace opsched {

ErrorSlotPool::~ErrorSlotPool() {
  for (void* page : pages_) {
    if (device_.is_cpu()) {
      std::free(page);
    } else {
      Status s = gpu::FreeHost(page);
      if (!s.ok()) Log().warn("freeing error slots: {}", s.ToString());
    }
  }
}

StatusOr<ErrorSlot> ErrorSlotPool::Acquire() {
  std::lock_guard<std::mutex> lock(mu_);
  if (free_.empty()) {
    const size_t bytes = kSlotsPerPage * sizeof(ErrorSlotData);
    void* host = nullptr;
    void* device = nullptr;
    if (device_.is_cpu()) {
      host = device = std::aligned_alloc(64, bytes);
      if (host == nullptr) return absl::ResourceExhaustedError("allocating error slots");
    } else {
      OPSCHED_ASSIGN_OR_RETURN(host, gpu::HostAllocMapped(bytes, &device));
    }
    pages_.push_back(host);
    for (int i = kSlotsPerPage - 1; i >= 0; --i) {
      free_.push_back(ErrorSlot{static_cast<ErrorSlotData*>(host) + i,
                                static_cast<ErrorSlotData*>(device) + i});
    }
  }
  ErrorSlot slot = free_.back();
  free_.pop_back();
  volatile ErrorSlotData* s = slot.host;
  s->position = -1;
  s->value = 0;
  s->state = kSlotPending;
  std::atomic_thread_fence(std::memory_order_seq_cst);
  return slot;
}

void ErrorSlotPool::Release(ErrorSlot slot) {
  std::lock_guard<std::mutex> lock(mu_);
  free_.push_back(slot);
}

int64_t SlotState(const ErrorSlot& slot) {
  const int64_t state = static_cast<volatile ErrorSlotData*>(slot.host)->state;
  std::atomic_thread_fence(std::memory_order_acquire);
  return state;
}

}  // namespace opsched
