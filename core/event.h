// Event: a point in a stream's work, for ordering streams and for timing. On the CPU an
// event records the steady clock when recorded (work there runs inline).
#pragma once

#include <chrono>

#include "core/device.h"
#include "core/status.h"
#include "core/stream.h"

namespace opsched {

class Event {
 public:
  static StatusOr<Event> Create(const Device& device);

  Event() = default;
  Event(Event&& other) noexcept { *this = std::move(other); }
  Event& operator=(Event&& other) noexcept;
  Event(const Event&) = delete;
  Event& operator=(const Event&) = delete;
  ~Event() { Reset(); }

  Status Record(const Stream& stream);
  Status Synchronize() const;
  // True when the work recorded before the event has finished (never waits).
  StatusOr<bool> Done() const;
  void* native() const { return native_; }
  const Device& device() const { return device_; }

  // Milliseconds from `start` to `end`; both recorded, `end` completed.
  static StatusOr<double> ElapsedMs(const Event& start, const Event& end);

 private:
  void Reset();

  Device device_;
  void* native_ = nullptr;
  std::chrono::steady_clock::time_point cpu_time_{};
};

}  // namespace opsched
