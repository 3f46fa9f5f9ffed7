// TensorDesc: dtype, shape and strides (in elements) of a tensor, with the shape maths
// every op needs (element counts, byte sizes, contiguity, overlap).
#pragma once

#include <cstdint>
#include <string>

#include "absl/container/inlined_vector.h"
#include "absl/types/span.h"
#include "core/dtype.h"
#include "core/status.h"

namespace opsched {

// Dimensions or strides; inline up to rank 6, so descriptors never allocate for the
// ranks ops support.
using Dims = absl::InlinedVector<int64_t, 6>;

class TensorDesc {
 public:
  static constexpr int kMaxRank = 8;
  // The largest tensor opsched accepts, in bytes (256 TiB, far beyond any device): a
  // valid tensor's element count, each stride and its storage extent stay below
  // kMaxBytes / element size, so every size and offset computed from a workload fits in
  // an int64 with room to spare (sums over tensors, float64 copies, byte offsets).
  static constexpr int64_t kMaxBytes = int64_t{1} << 48;

  TensorDesc() = default;

  // Row-major contiguous tensor. Dimensions must be >= 0 and within the limits (checked
  // by Validate()).
  static TensorDesc Contiguous(DType dtype, absl::Span<const int64_t> shape);
  // Row-major contiguous tensor, checked: an error when Validate() fails.
  static StatusOr<TensorDesc> CheckedContiguous(DType dtype, absl::Span<const int64_t> shape);
  // Tensor with explicit strides; an error when ranks differ or Validate() fails.
  static StatusOr<TensorDesc> Strided(DType dtype, absl::Span<const int64_t> shape,
                                      absl::Span<const int64_t> strides);
  // Row-major strides of `shape` (meaningful when the shape is within the limits).
  static Dims ContiguousStrides(absl::Span<const int64_t> shape);

  DType dtype() const { return dtype_; }
  int rank() const { return static_cast<int>(shape_.size()); }
  const Dims& shape() const { return shape_; }
  const Dims& strides() const { return strides_; }
  int64_t dim(int i) const { return shape_[i]; }
  int64_t stride(int i) const { return strides_[i]; }

  // Number of elements (1 for rank 0, 0 when any dimension is 0).
  int64_t numel() const;
  // Bytes of the elements themselves: numel() * element size.
  int64_t bytes() const { return numel() * static_cast<int64_t>(DTypeSize(dtype_)); }
  // Elements of storage the tensor spans from its first element: 1 + sum((d-1)*s),
  // 0 when empty. A buffer needs at least this many elements.
  int64_t storage_elements() const;
  int64_t storage_bytes() const {
    return storage_elements() * static_cast<int64_t>(DTypeSize(dtype_));
  }

  // Row-major dense (strides of size-1 dimensions are ignored).
  bool is_contiguous() const;
  // No two index tuples map to the same element (a tensor that is safe to write).
  bool is_non_overlapping() const;

  // Checks the rank is supported, dims and strides are non-negative, and the element
  // count, each stride and the storage extent stay within kMaxBytes (no overflow).
  Status Validate() const;

  // "f32[2,3]" when contiguous, "f32[2,3]:[1,2]" otherwise (the workload text form).
  std::string ToString() const;

  bool operator==(const TensorDesc& other) const {
    return dtype_ == other.dtype_ && shape_ == other.shape_ && strides_ == other.strides_;
  }
  bool operator!=(const TensorDesc& other) const { return !(*this == other); }

 private:
  DType dtype_ = DType::kF32;
  Dims shape_;
  Dims strides_;
};

}  // namespace opsched
