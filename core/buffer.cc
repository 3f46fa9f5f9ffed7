#include "core/buffer.h"

#include <cstdlib>
#include <cstring>

#include "core/format.h"
#include "core/gpu/gpu_backend.h"
#include "core/log.h"

namespace opsched {

StatusOr<Buffer> Buffer::Allocate(const Device& device, size_t bytes) { return Make(device, bytes, gpu::Malloc); }

StatusOr<Buffer> Buffer::AllocateDuringCapture(const Device& device, size_t bytes) {
  return Make(device, bytes, gpu::MallocDuringCapture);
}

StatusOr<Buffer> Buffer::Make(const Device& device, size_t bytes, StatusOr<void*> (*gpu_malloc)(const Device&, size_t)) {
  Buffer buffer;
  buffer.device_ = device;
  buffer.size_ = bytes;
  if (bytes == 0) return buffer;
  if (device.is_cpu()) {
    size_t rounded = (bytes + 63) / 64 * 64;
    buffer.data_ = std::aligned_alloc(64, rounded);
    if (buffer.data_ == nullptr) {
      return absl::ResourceExhaustedError(fmt::format("host allocation of {} bytes", bytes));
    }
    return buffer;
  }
  OPSCHED_ASSIGN_OR_RETURN(buffer.data_, gpu_malloc(device, bytes));
  return buffer;
}

Buffer& Buffer::operator=(Buffer&& other) noexcept {
  if (this != &other) {
    Reset();
    device_ = other.device_;
    data_ = other.data_;
    size_ = other.size_;
    other.data_ = nullptr;
    other.size_ = 0;
  }
  return *this;
}

void Buffer::Reset() {
  if (data_ != nullptr) {
    if (device_.is_cpu()) {
      std::free(data_);
    } else {
      Status s = gpu::Free(device_, data_);
      if (!s.ok()) Log().warn("freeing a device buffer: {}", s.ToString());
    }
  }
  data_ = nullptr;
  size_ = 0;
}

Status Buffer::CheckRange(size_t bytes, size_t offset) const {
  if (offset > size_ || bytes > size_ - offset) {
    return absl::OutOfRangeError(fmt::format("copy of {} bytes at offset {} exceeds the buffer's {} bytes",
                                             bytes, offset, size_));
  }
  return absl::OkStatus();
}

Status Buffer::CopyFromHost(const void* src, size_t bytes, size_t offset) {
  OPSCHED_RETURN_IF_ERROR(CheckRange(bytes, offset));
  if (bytes == 0) return absl::OkStatus();
  char* dst = static_cast<char*>(data_) + offset;
  if (device_.is_cpu()) {
    std::memcpy(dst, src, bytes);
    return absl::OkStatus();
  }
  OPSCHED_RETURN_IF_ERROR(gpu::SetDevice(device_));
  OPSCHED_RETURN_IF_ERROR(gpu::MemcpyAsync(dst, src, bytes, nullptr));
  return gpu::StreamSynchronize(nullptr);
}

Status Buffer::CopyToHost(void* dst, size_t bytes, size_t offset) const {
  OPSCHED_RETURN_IF_ERROR(CheckRange(bytes, offset));
  if (bytes == 0) return absl::OkStatus();
  const char* src = static_cast<const char*>(data_) + offset;
  if (device_.is_cpu()) {
    std::memcpy(dst, src, bytes);
    return absl::OkStatus();
  }
  OPSCHED_RETURN_IF_ERROR(gpu::SetDevice(device_));
  OPSCHED_RETURN_IF_ERROR(gpu::MemcpyAsync(dst, src, bytes, nullptr));
  return gpu::StreamSynchronize(nullptr);
}

StatusOr<Tensor> Buffer::AsTensor(const TensorDesc& desc) const {
  OPSCHED_RETURN_IF_ERROR(desc.Validate());
  if (static_cast<size_t>(desc.storage_bytes()) > size_) {
    return absl::OutOfRangeError(fmt::format("tensor {} needs {} bytes; buffer has {}",
                                             desc.ToString(), desc.storage_bytes(), size_));
  }
  return Tensor{desc, data_, device_};
}

}  // namespace opsched
