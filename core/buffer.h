// Buffer: owned memory on a device (64-byte aligned host memory for the CPU), freed with
// the object. Tensors point into buffers.
#pragma once

#include <cstddef>

#include "core/device.h"
#include "core/status.h"
#include "core/tensor.h"

namespace opsched {

class Buffer {
 public:
  static StatusOr<Buffer> Allocate(const Device& device, size_t bytes);
  // Allocate, also while a stream of this thread is being captured into a CUDA graph
  // (gpu::MallocDuringCapture); the buffer must outlive the graphs that use it.
  static StatusOr<Buffer> AllocateDuringCapture(const Device& device, size_t bytes);

  Buffer() = default;
  Buffer(Buffer&& other) noexcept { *this = std::move(other); }
  Buffer& operator=(Buffer&& other) noexcept;
  Buffer(const Buffer&) = delete;
  Buffer& operator=(const Buffer&) = delete;
  ~Buffer() { Reset(); }

  void* data() const { return data_; }
  size_t size() const { return size_; }
  const Device& device() const { return device_; }

  // Synchronous copies between this buffer (at `offset`) and host memory.
  Status CopyFromHost(const void* src, size_t bytes, size_t offset = 0);
  Status CopyToHost(void* dst, size_t bytes, size_t offset = 0) const;
  // A tensor over this buffer's memory; an error when `desc` needs more storage.
  StatusOr<Tensor> AsTensor(const TensorDesc& desc) const;
  // Frees the memory now.
  void Reset();

 private:
  // A buffer of `bytes` on `device`, device memory from `gpu_malloc`.
  static StatusOr<Buffer> Make(const Device& device, size_t bytes,
                               StatusOr<void*> (*gpu_malloc)(const Device&, size_t));
  Status CheckRange(size_t bytes, size_t offset) const;

  Device device_;
  void* data_ = nullptr;
  size_t size_ = 0;
};

}  // namespace opsched
