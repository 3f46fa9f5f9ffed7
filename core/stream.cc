#include "core/stream.h"

#include "core/event.h"
#include "core/gpu/gpu_backend.h"
#include "core/log.h"

namespace opsched {

StatusOr<Stream> Stream::Create(const Device& device) {
  Stream stream;
  stream.device_ = device;
  if (device.is_gpu()) {
    OPSCHED_ASSIGN_OR_RETURN(stream.native_, gpu::StreamCreate(device));
    stream.owned_ = true;
  }
  return stream;
}

Stream Stream::Wrap(const Device& device, void* native) {
  Stream stream;
  stream.device_ = device;
  stream.native_ = native;
  return stream;
}

Stream& Stream::operator=(Stream&& other) noexcept {
  if (this != &other) {
    Reset();
    device_ = other.device_;
    native_ = other.native_;
    owned_ = other.owned_;
    other.native_ = nullptr;
    other.owned_ = false;
  }
  return *this;
}

void Stream::Reset() {
  if (owned_ && native_ != nullptr) {
    Status s = gpu::StreamDestroy(native_);
    if (!s.ok()) Log().warn("destroying a stream: {}", s.ToString());
  }
  native_ = nullptr;
  owned_ = false;
}

Status Stream::Synchronize() const {
  if (device_.is_cpu()) return absl::OkStatus();
  return gpu::StreamSynchronize(native_);
}

Status Stream::WaitFor(const Event& event) const {
  if (device_.is_cpu()) return absl::OkStatus();
  return gpu::StreamWaitEvent(native_, event.native());
}

}  // namespace opsched
