// Scatter on the CPU: element access for f32/f16/bf16 (computed in float) and i32/i64
// (exact, add and mul wrapping around), index validation and the two loops (row-major
// sequential; parallel over independent slices).
#pragma once

#include <cmath>
#include <cstdint>
#include <cstring>

#include "core/element.h"
#include "ops/scatter/scatter_combine_integer.h"
#include "ops/scatter/scatter_params.h"

namespace opsched::scatter::cpu {

inline float Combine(Reduction r, float acc, float v) {
  switch (r) {
    case Reduction::kNone:
      return v;
    case Reduction::kAdd:
      return acc + v;
    case Reduction::kMul:
      return acc * v;
    case Reduction::kMin:
      return std::isnan(acc) || std::isnan(v) ? NAN : (v < acc ? v : acc);
    case Reduction::kMax:
      return std::isnan(acc) || std::isnan(v) ? NAN : (v > acc ? v : acc);
  }
  return v;
}
inline int32_t Combine(Reduction r, int32_t acc, int32_t v) { return CombineInteger(r, acc, v); }
inline int64_t Combine(Reduction r, int64_t acc, int64_t v) { return CombineInteger(r, acc, v); }

// Calls fn.template operator()<Type, Index>() (a template lambda) for the params'
// element and index types.
template <typename Fn>
void VisitTypes(const Params& p, Fn&& fn) {
  auto with_index = [&]<typename T>() {
    if (p.index64) {
      fn.template operator()<T, int64_t>();
    } else {
      fn.template operator()<T, int32_t>();
    }
  };
  switch (p.type) {
    case ElementType::kF32:
      with_index.template operator()<F32>();
      break;
    case ElementType::kF16:
      with_index.template operator()<F16>();
      break;
    case ElementType::kBF16:
      with_index.template operator()<BF16>();
      break;
    case ElementType::kI32:
      with_index.template operator()<I32>();
      break;
    case ElementType::kI64:
      with_index.template operator()<I64>();
      break;
  }
}

// Decomposes slice s (a position of every dimension but the axis, row-major over the
// indices shape) into the offsets of its first element in indices, updates and out (with
// the axis coordinate 0).
inline void SliceBase(const Params& p, int64_t s, int64_t* index_off, int64_t* update_off,
                      int64_t* out_off) {
  *index_off = *update_off = *out_off = 0;
  for (int d = p.rank - 1; d >= 0; --d) {
    if (d == p.axis) continue;
    const int64_t c = s % p.shape[d];
    s /= p.shape[d];
    *index_off += c * p.index_strides[d];
    *update_off += c * p.update_strides[d];
    *out_off += c * p.out_strides[d];
  }
}

// Copies data into out (both with their strides) for logical elements [begin, end).
template <typename T>
void CopyRange(const Params& p, int64_t begin, int64_t end) {
  using S = typename T::Storage;
  const S* data = static_cast<const S*>(p.data);
  S* out = static_cast<S*>(p.out);
  if (p.fast) {
    std::memcpy(out + begin, data + begin, (end - begin) * sizeof(S));
    return;
  }
  for (int64_t i = begin; i < end; ++i) {
    int64_t rest = i, din = 0, dout = 0;
    for (int d = p.rank - 1; d >= 0; --d) {
      const int64_t c = rest % p.data_shape[d];
      rest /= p.data_shape[d];
      din += c * p.data_strides[d];
      dout += c * p.out_strides[d];
    }
    out[dout] = data[din];
  }
}

// Applies the updates of slices [begin, end) in axis order.
template <typename T, typename I>
void ScatterSlices(const Params& p, int64_t begin, int64_t end) {
  using S = typename T::Storage;
  const I* indices = static_cast<const I*>(p.indices);
  const S* updates = static_cast<const S*>(p.updates);
  S* out = static_cast<S*>(p.out);
  const int64_t is = p.index_strides[p.axis];
  const int64_t us = p.update_strides[p.axis];
  const int64_t os = p.out_strides[p.axis];
  for (int64_t s = begin; s < end; ++s) {
    int64_t io, uo, oo;
    SliceBase(p, s, &io, &uo, &oo);
    for (int64_t a = 0; a < p.index_axis; ++a) {
      int64_t index = static_cast<int64_t>(indices[io + a * is]);
      if (index < 0) index += p.axis_size;
      S& dst = out[oo + index * os];
      dst = T::Store(Combine(p.reduction, T::Load(dst), T::Load(updates[uo + a * us])));
    }
  }
}

// The first position (row-major) of [begin, end) holding an out-of-range index, or -1;
// *value receives the index found there. Walks the positions with an odometer: one
// division per call, not per element.
template <typename I>
int64_t FirstBadIndex(const Params& p, int64_t begin, int64_t end, int64_t* value) {
  if (begin >= end) return -1;  // (and no zero-sized dimension to divide by)
  const I* indices = static_cast<const I*>(p.indices);
  int64_t coord[kMaxRank] = {};
  int64_t off = 0;
  for (int64_t rest = begin, d = p.rank - 1; d >= 0; --d) {
    coord[d] = rest % p.shape[d];
    rest /= p.shape[d];
    off += coord[d] * p.index_strides[d];
  }
  for (int64_t pos = begin; pos < end; ++pos) {
    const int64_t index = static_cast<int64_t>(indices[off]);
    if (index < -p.axis_size || index >= p.axis_size) {
      *value = index;
      return pos;
    }
    for (int d = p.rank - 1; d >= 0; --d) {
      off += p.index_strides[d];
      if (++coord[d] < p.shape[d]) break;
      off -= coord[d] * p.index_strides[d];
      coord[d] = 0;
    }
  }
  return -1;
}

}  // namespace opsched::scatter::cpu
