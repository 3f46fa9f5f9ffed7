// ErrorSlot: how a device kernel reports a data-dependent error (an out-of-range index)
// without a device-side assert and without a host synchronisation. The slot lives in
// page-locked host memory the device writes directly. The host sets it to kSlotPending
// before the op; only an op that finds an error writes it (the first bad position and
// its value, then the state kSlotError). Once the op's work has finished (known from
// the stream or an event), a slot still pending means no error.
#pragma once

#include <cstdint>

namespace opsched {

struct ErrorSlotData {
  int64_t state;     // kSlotPending, or kSlotError once an error was found
  int64_t position;  // linear position (row-major) of the first bad element
  int64_t value;     // the bad value found there
  int64_t reserved;
};

inline constexpr int64_t kSlotPending = 0;
inline constexpr int64_t kSlotError = 2;

struct ErrorSlot {
  ErrorSlotData* host = nullptr;    // host view
  ErrorSlotData* device = nullptr;  // device view of the same bytes (CPU: same as host)
};

}  // namespace opsched
