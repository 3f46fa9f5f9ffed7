#include "core/event.h"

#include "core/gpu/gpu_backend.h"
#include "core/log.h"

namespace opsched {

StatusOr<Event> Event::Create(const Device& device) {
  Event event;
  event.device_ = device;
  if (device.is_gpu()) {
    OPSCHED_ASSIGN_OR_RETURN(event.native_, gpu::EventCreate(device));
  }
  return event;
}

Event& Event::operator=(Event&& other) noexcept {
  if (this != &other) {
    Reset();
    device_ = other.device_;
    native_ = other.native_;
    cpu_time_ = other.cpu_time_;
    other.native_ = nullptr;
  }
  return *this;
}

void Event::Reset() {
  if (native_ != nullptr) {
    Status s = gpu::EventDestroy(native_);
    if (!s.ok()) Log().warn("destroying an event: {}", s.ToString());
  }
  native_ = nullptr;
}

Status Event::Record(const Stream& stream) {
  if (stream.device() != device_) {
    return absl::InvalidArgumentError("event and stream are on different devices");
  }
  if (device_.is_cpu()) {
    cpu_time_ = std::chrono::steady_clock::now();
    return absl::OkStatus();
  }
  return gpu::EventRecord(native_, stream.native());
}

Status Event::Synchronize() const {
  if (device_.is_cpu()) return absl::OkStatus();
  return gpu::EventSynchronize(native_);
}

StatusOr<bool> Event::Done() const {
  if (device_.is_cpu()) return true;
  return gpu::EventQuery(native_);
}

StatusOr<double> Event::ElapsedMs(const Event& start, const Event& end) {
  if (start.device_ != end.device_) {
    return absl::InvalidArgumentError("events are on different devices");
  }
  if (start.device_.is_cpu()) {
    return std::chrono::duration<double, std::milli>(end.cpu_time_ - start.cpu_time_).count();
  }
  OPSCHED_ASSIGN_OR_RETURN(float ms, gpu::EventElapsedMs(start.native_, end.native_));
  return static_cast<double>(ms);
}

}  // namespace opsched
