// The scatter problem as the kernels see it: plain data shared by the CPU and GPU
// implementations (no vendor or opsched headers, so nvcc and hipcc compile it alike).
#pragma once

#include <cstdint>

namespace opsched::scatter {

enum class Reduction : int32_t { kNone = 0, kAdd = 1, kMul = 2, kMin = 3, kMax = 4 };
enum class ElementType : int32_t { kF32 = 0, kF16 = 1, kBF16 = 2, kI32 = 3, kI64 = 4 };

// The integer element types (exact: add and mul wrap around, scatter_combine_integer.h).
inline bool IsIntegerElement(ElementType t) { return t == ElementType::kI32 || t == ElementType::kI64; }

inline constexpr int kMaxRank = 6;

struct Params {
  int32_t rank = 0;
  int32_t axis = 0;
  Reduction reduction = Reduction::kNone;
  ElementType type = ElementType::kF32;
  bool index64 = true;  // indices are i64 (else i32)
  // Logical shape of indices and updates; data/out shape.
  int64_t shape[kMaxRank] = {};
  int64_t data_shape[kMaxRank] = {};
  // Strides in elements.
  int64_t index_strides[kMaxRank] = {};
  int64_t update_strides[kMaxRank] = {};
  int64_t data_strides[kMaxRank] = {};
  int64_t out_strides[kMaxRank] = {};
  int64_t n = 0;          // elements of indices (= updates)
  int64_t data_n = 0;     // elements of data (= out)
  int64_t axis_size = 0;  // data.shape[axis]
  // Fast path: indices, updates, data and out contiguous and indices.shape equal to
  // data.shape except along axis. Then position p = (outer, a, inner) and the target is
  // outer * axis_size * inner + index * inner + inner_coord.
  bool fast = false;
  int64_t inner = 1;       // product of shape[axis+1:]
  int64_t index_axis = 1;  // shape[axis]
  const void* data = nullptr;
  const void* indices = nullptr;
  const void* updates = nullptr;
  void* out = nullptr;
  bool in_place = false;  // out aliases data
};

}  // namespace opsched::scatter
