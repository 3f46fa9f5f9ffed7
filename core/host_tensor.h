// HostTensor: a tensor that owns host memory, with element access as double whatever
// its dtype. References, input generators, the tuner's checks and tests use it.
#pragma once

#include <cstdint>
#include <vector>

#include "core/tensor.h"

namespace opsched {

class HostTensor {
 public:
  HostTensor() = default;
  // Storage for `desc` (its storage_elements(), so strided layouts fit), zero-filled.
  explicit HostTensor(const TensorDesc& desc);

  const TensorDesc& desc() const { return desc_; }
  void* data() { return storage_.data(); }
  const void* data() const { return storage_.data(); }
  size_t storage_bytes() const { return storage_.size(); }
  Tensor tensor() { return Tensor{desc_, storage_.data(), Device::Cpu()}; }
  Tensor tensor() const { return Tensor{desc_, const_cast<uint8_t*>(storage_.data()), Device::Cpu()}; }

  // Element at storage offset `offset` (in elements), converted to double.
  double GetAt(int64_t offset) const;
  void SetAt(int64_t offset, double value);
  // The storage offset of the i-th element in row-major logical order.
  int64_t OffsetOf(int64_t linear) const;
  double Get(int64_t linear) const { return GetAt(OffsetOf(linear)); }
  // An i32/i64 element exactly (every int64 value, where the double of Get rounds above
  // 2^53); a float element truncated toward zero.
  int64_t GetIntAt(int64_t offset) const;
  int64_t GetInt(int64_t linear) const { return GetIntAt(OffsetOf(linear)); }
  void Set(int64_t linear, double value) { SetAt(OffsetOf(linear), value); }
  // Every storage byte set to `byte` (poisoning outputs before a run).
  void Fill(uint8_t byte);

 private:
  TensorDesc desc_;
  bool contiguous_ = true;
  std::vector<uint8_t> storage_;
};

}  // namespace opsched
