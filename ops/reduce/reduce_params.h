// The reduce problem as the kernels see it: plain data shared by the CPU and GPU
// implementations (no vendor or opsched headers, so nvcc and hipcc compile it alike).
//
// Any reduction of any strided tensor becomes M outputs of K terms each:
//   y[m] = op over k of x[kept_offset(m) + reduced_offset(k)]
// where kept_offset walks the kept dimensions (row-major in y's order) and
// reduced_offset the reduced ones, both after canonicalisation: size-1 dimensions
// dropped, adjacent dimensions of one kind merged where their strides allow, reduced
// dimensions ordered by decreasing stride. An NCHW bias gradient (sum over 0,2,3) is
// then kept [C] stride HW, reduced [N, HW] strides [C*HW, 1]: N rows of HW contiguous
// terms per output.
#pragma once

#include <cstdint>

namespace opsched::reduce {

enum class ReduceOp : int32_t { kSum = 0, kMean = 1, kMax = 2, kMin = 3, kSumSquares = 4 };
enum class ElementType : int32_t { kF32 = 0, kF16 = 1, kBF16 = 2, kI32 = 3, kI64 = 4 };

// i32 and i64 (sum, max and min; accumulated in int64, reduce_math.h).
inline bool IsIntegerElement(ElementType t) { return t == ElementType::kI32 || t == ElementType::kI64; }

// Bytes per element of x or y.
inline int ElementBytes(ElementType t) {
  switch (t) {
    case ElementType::kF16:
    case ElementType::kBF16:
      return 2;
    case ElementType::kI64:
      return 8;
    default:
      return 4;
  }
}

// Bytes per accumulator (and per split partial in a workspace): int64 for integers, else float.
inline int AccumulatorBytes(ElementType in) { return IsIntegerElement(in) ? 8 : 4; }

inline constexpr int kMaxRank = 6;

struct Problem {
  ReduceOp op = ReduceOp::kSum;
  ElementType in_type = ElementType::kF32;
  ElementType out_type = ElementType::kF32;
  int64_t outputs = 0;  // M
  int64_t length = 0;   // K, terms per output
  int32_t kept_rank = 0;
  int64_t kept_shape[kMaxRank] = {};
  int64_t kept_strides[kMaxRank] = {};  // elements of x
  int32_t reduced_rank = 0;
  int64_t reduced_shape[kMaxRank] = {};
  int64_t reduced_strides[kMaxRank] = {};  // decreasing; the innermost is last
  // The innermost reduced dimension is contiguous: every output's terms are
  // length / row runs of `row` contiguous elements.
  bool rows = false;
  int64_t row = 1;
  // The innermost kept dimension is contiguous: neighbouring outputs are neighbours in x.
  bool columns = false;
  float scale = 1.0f;  // 1/K for mean
  const void* x = nullptr;
  void* y = nullptr;
};

// The value of an empty reduction (K = 0) for sum-like ops; max/min of nothing is an
// error caught before any launch.
inline constexpr float kEmptyValue = 0.0f;

}  // namespace opsched::reduce
