#include "core/tensor_desc.h"

#include <algorithm>
#include <numeric>

#include "core/format.h"

namespace opsched {

TensorDesc TensorDesc::Contiguous(DType dtype, absl::Span<const int64_t> shape) {
  TensorDesc desc;
  desc.dtype_ = dtype;
  desc.shape_.assign(shape.begin(), shape.end());
  desc.strides_ = ContiguousStrides(shape);
  return desc;
}

StatusOr<TensorDesc> TensorDesc::CheckedContiguous(DType dtype, absl::Span<const int64_t> shape) {
  TensorDesc desc = Contiguous(dtype, shape);
  OPSCHED_RETURN_IF_ERROR(desc.Validate());
  return desc;
}

StatusOr<TensorDesc> TensorDesc::Strided(DType dtype, absl::Span<const int64_t> shape,
                                         absl::Span<const int64_t> strides) {
  if (shape.size() != strides.size()) {
    return absl::InvalidArgumentError(fmt::format("tensor has {} dimensions but {} strides",
                                                  shape.size(), strides.size()));
  }
  TensorDesc desc;
  desc.dtype_ = dtype;
  desc.shape_.assign(shape.begin(), shape.end());
  desc.strides_.assign(strides.begin(), strides.end());
  OPSCHED_RETURN_IF_ERROR(desc.Validate());
  // Canonical form: a layout that is row-major dense (size-1 dimensions may carry any
  // stride) gets the row-major strides, so equal layouts compare and print equal.
  if (desc.is_contiguous()) desc.strides_ = ContiguousStrides(desc.shape_);
  return desc;
}

Dims TensorDesc::ContiguousStrides(absl::Span<const int64_t> shape) {
  Dims strides(shape.size());
  // Unsigned: a shape beyond the limits wraps here instead of overflowing (Validate()
  // refuses it).
  uint64_t running = 1;
  for (int i = static_cast<int>(shape.size()) - 1; i >= 0; --i) {
    strides[i] = static_cast<int64_t>(running);
    running *= static_cast<uint64_t>(std::max<int64_t>(shape[i], 1));
  }
  return strides;
}

int64_t TensorDesc::numel() const {
  int64_t n = 1;
  for (int64_t d : shape_) n *= d;
  return n;
}

int64_t TensorDesc::storage_elements() const {
  if (numel() == 0) return 0;
  int64_t extent = 1;
  for (int i = 0; i < rank(); ++i) extent += (shape_[i] - 1) * strides_[i];
  return extent;
}

bool TensorDesc::is_contiguous() const {
  int64_t expected = 1;
  for (int i = rank() - 1; i >= 0; --i) {
    if (shape_[i] == 1) continue;
    if (strides_[i] != expected) return false;
    expected *= shape_[i];
  }
  return true;
}

bool TensorDesc::is_non_overlapping() const {
  // Sort the non-trivial dimensions by stride; each stride must step over the whole
  // extent of the dimensions with smaller strides.
  absl::InlinedVector<int, 6> order;
  for (int i = 0; i < rank(); ++i) {
    if (shape_[i] == 0) return true;
    if (shape_[i] > 1) order.push_back(i);
  }
  std::sort(order.begin(), order.end(),
            [&](int a, int b) { return strides_[a] < strides_[b]; });
  int64_t extent = 1;
  for (int i : order) {
    if (strides_[i] < extent) return false;
    extent = strides_[i] * shape_[i];
  }
  return true;
}

Status TensorDesc::Validate() const {
  if (rank() > kMaxRank) {
    return absl::InvalidArgumentError(
        fmt::format("rank {} exceeds the supported maximum {}", rank(), kMaxRank));
  }
  if (shape_.size() != strides_.size()) {
    return absl::InvalidArgumentError("shape and strides have different ranks");
  }
  for (int i = 0; i < rank(); ++i) {
    if (shape_[i] < 0) {
      return absl::InvalidArgumentError(fmt::format("dimension {} is negative ({})", i, shape_[i]));
    }
    if (strides_[i] < 0) {
      return absl::InvalidArgumentError(fmt::format("stride {} is negative ({})", i, strides_[i]));
    }
  }
  // Sizes: the dense span (the product of the dimensions, empty ones counted as 1), each
  // stride and the storage extent, all in elements, within the limit.
  const int64_t size = static_cast<int64_t>(DTypeSize(dtype_));
  const int64_t limit = kMaxBytes / size;
  const auto too_large = [&](std::string what) {
    return absl::InvalidArgumentError(fmt::format(
        "{} more than {} elements of {} bytes ({} bytes: the largest tensor opsched accepts)",
        what, limit, size, kMaxBytes));
  };
  const std::string shape = fmt::format("{}[{}]", DTypeName(dtype_), fmt::join(shape_, ","));
  int64_t span = 1;
  for (int i = 0; i < rank(); ++i) {
    if (__builtin_mul_overflow(span, std::max<int64_t>(shape_[i], 1), &span) || span > limit) {
      return too_large(fmt::format("{} holds", shape));
    }
  }
  for (int i = 0; i < rank(); ++i) {
    if (strides_[i] > limit) return too_large(fmt::format("stride {} ({}) steps over", i, strides_[i]));
  }
  if (numel() == 0) return absl::OkStatus();  // no storage
  int64_t extent = 1;
  for (int i = 0; i < rank(); ++i) {
    int64_t term;
    if (__builtin_mul_overflow(shape_[i] - 1, strides_[i], &term) ||
        __builtin_add_overflow(extent, term, &extent) || extent > limit) {
      return too_large(fmt::format("{}:[{}] spans", shape, fmt::join(strides_, ",")));
    }
  }
  return absl::OkStatus();
}

std::string TensorDesc::ToString() const {
  std::string out = fmt::format("{}[{}]", DTypeName(dtype_), fmt::join(shape_, ","));
  if (!is_contiguous()) out += fmt::format(":[{}]", fmt::join(strides_, ","));
  return out;
}

}  // namespace opsched
