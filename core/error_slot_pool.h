// ErrorSlotPool: error slots (core/error_slot.h) in page-locked, device-mapped host
// memory, recycled. Acquire() hands out a slot in the pending state.
#pragma once

#include <mutex>
#include <vector>

#include "core/device.h"
#include "core/error_slot.h"
#include "core/status.h"

namespace opsched {

class ErrorSlotPool {
 public:
  explicit ErrorSlotPool(Device device) : device_(device) {}
  ~ErrorSlotPool();
  ErrorSlotPool(const ErrorSlotPool&) = delete;
  ErrorSlotPool& operator=(const ErrorSlotPool&) = delete;

  StatusOr<ErrorSlot> Acquire();
  void Release(ErrorSlot slot);

 private:
  static constexpr int kSlotsPerPage = 256;
  Device device_;
  std::mutex mu_;
  std::vector<ErrorSlot> free_;
  std::vector<void*> pages_;
};

// The state of a slot as the host sees it now (kSlotPending while the op runs).
int64_t SlotState(const ErrorSlot& slot);

}  // namespace opsched
