// Stream: an ordered queue of device work. On the CPU, work runs inline and a stream
// only names the device. Owned streams are destroyed with the object; wrapped ones
// (a consumer's cudaStream_t) are not.
#pragma once

#include "core/device.h"
#include "core/status.h"

namespace opsched {

class Event;

class Stream {
 public:
  // A new stream on `device` (non-blocking with respect to the legacy default stream).
  static StatusOr<Stream> Create(const Device& device);
  // A non-owning view of a native stream handle; nullptr is the default stream.
  static Stream Wrap(const Device& device, void* native);

  Stream() = default;
  Stream(Stream&& other) noexcept { *this = std::move(other); }
  Stream& operator=(Stream&& other) noexcept;
  Stream(const Stream&) = delete;
  Stream& operator=(const Stream&) = delete;
  ~Stream() { Reset(); }

  const Device& device() const { return device_; }
  void* native() const { return native_; }
  // Blocks until all work queued so far has finished.
  Status Synchronize() const;
  // Later work on this stream waits for `event`.
  Status WaitFor(const Event& event) const;

 private:
  void Reset();

  Device device_;
  void* native_ = nullptr;
  bool owned_ = false;
};

}  // namespace opsched
