#include "core/host_tensor.h"

#include <cstring>

#include "core/half.h"

namespace opsched {

HostTensor::HostTensor(const TensorDesc& desc)
    : desc_(desc),
      contiguous_(desc.is_contiguous()),
      storage_(static_cast<size_t>(desc.storage_bytes()), 0) {}

double HostTensor::GetAt(int64_t offset) const {
  const uint8_t* p = storage_.data() + offset * DTypeSize(desc_.dtype());
  switch (desc_.dtype()) {
    case DType::kF32: {
      float v;
      std::memcpy(&v, p, sizeof v);
      return v;
    }
    case DType::kF16: {
      uint16_t v;
      std::memcpy(&v, p, sizeof v);
      return HalfToFloat(v);
    }
    case DType::kBF16: {
      uint16_t v;
      std::memcpy(&v, p, sizeof v);
      return Bf16ToFloat(v);
    }
    case DType::kI32: {
      int32_t v;
      std::memcpy(&v, p, sizeof v);
      return v;
    }
    case DType::kI64: {
      int64_t v;
      std::memcpy(&v, p, sizeof v);
      return static_cast<double>(v);
    }
  }
  return 0;
}

int64_t HostTensor::GetIntAt(int64_t offset) const {
  const uint8_t* p = storage_.data() + offset * DTypeSize(desc_.dtype());
  if (desc_.dtype() == DType::kI32) {
    int32_t v;
    std::memcpy(&v, p, sizeof v);
    return v;
  }
  if (desc_.dtype() == DType::kI64) {
    int64_t v;
    std::memcpy(&v, p, sizeof v);
    return v;
  }
  return static_cast<int64_t>(GetAt(offset));
}

void HostTensor::SetAt(int64_t offset, double value) {
  uint8_t* p = storage_.data() + offset * DTypeSize(desc_.dtype());
  switch (desc_.dtype()) {
    case DType::kF32: {
      float v = static_cast<float>(value);
      std::memcpy(p, &v, sizeof v);
      return;
    }
    case DType::kF16: {
      uint16_t v = FloatToHalf(static_cast<float>(value));
      std::memcpy(p, &v, sizeof v);
      return;
    }
    case DType::kBF16: {
      uint16_t v = FloatToBf16(static_cast<float>(value));
      std::memcpy(p, &v, sizeof v);
      return;
    }
    case DType::kI32: {
      int32_t v = static_cast<int32_t>(value);
      std::memcpy(p, &v, sizeof v);
      return;
    }
    case DType::kI64: {
      int64_t v = static_cast<int64_t>(value);
      std::memcpy(p, &v, sizeof v);
      return;
    }
  }
}

int64_t HostTensor::OffsetOf(int64_t linear) const {
  if (contiguous_) return linear;
  int64_t offset = 0;
  for (int d = desc_.rank() - 1; d >= 0; --d) {
    const int64_t size = desc_.dim(d);
    offset += (linear % size) * desc_.stride(d);
    linear /= size;
  }
  return offset;
}

void HostTensor::Fill(uint8_t byte) {
  if (!storage_.empty()) std::memset(storage_.data(), byte, storage_.size());
}

}  // namespace opsched
