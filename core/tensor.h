// Tensor: a descriptor plus a data pointer on a device. A Tensor never owns memory;
// Buffer (core/buffer.h) does.
#pragma once

#include "core/device.h"
#include "core/tensor_desc.h"

namespace opsched {

struct Tensor {
  TensorDesc desc;
  void* data = nullptr;
  Device device;

  template <typename T>
  T* data_as() const {
    return static_cast<T*>(data);
  }
  // Byte range [begin, end) of the storage the tensor spans.
  const char* storage_begin() const { return static_cast<const char*>(data); }
  const char* storage_end() const { return storage_begin() + desc.storage_bytes(); }
  // True when the storage ranges of the two tensors intersect.
  bool Overlaps(const Tensor& other) const {
    return device == other.device && desc.numel() > 0 && other.desc.numel() > 0 &&
           storage_begin() < other.storage_end() && other.storage_begin() < storage_end();
  }
};

}  // namespace opsched
