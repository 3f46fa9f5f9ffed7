// L2Flusher: empties a GPU's L2 before a timed repetition, the way MeasureOptions::l2_flush
// says (core/l2_flush.h), with a buffer twice the L2 size. Used by the tuner's DeviceClock
// and by opsched bench's clock of Runtime calls, so both measure alike. On a CPU, or with
// L2Flush::kNone, it does nothing.
#pragma once

#include <cstdint>

#include "core/buffer.h"
#include "core/l2_flush.h"
#include "core/status.h"
#include "core/stream.h"

namespace opsched {

class L2Flusher {
 public:
  L2Flusher() = default;
  // For repetitions on `stream`'s device (and ordered on `stream`). `l2_bytes`: the
  // device's L2 size (Target::l2_bytes); 0 or less when unknown (64 MiB is assumed).
  static StatusOr<L2Flusher> Create(L2Flush kind, const Stream& stream, int64_t l2_bytes);

  // Queues the flush on `stream` before repetition `repetition` (the overwrite's byte
  // value changes with it, so that no repetition writes what the last one left).
  Status Flush(const Stream& stream, int repetition) const;

  // The flush each repetition gets: kNone on a CPU.
  L2Flush kind() const { return kind_; }

 private:
  L2Flush kind_ = L2Flush::kNone;
  Buffer buffer_;
};

}  // namespace opsched
