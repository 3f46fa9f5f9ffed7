// Device helpers shared by the pointwise kernels: packed (vector) loads and stores of
// `V` consecutive elements of any element type, falling back to single elements where
// the address is not aligned for the pack.
#pragma once

#include <cstdint>

#include "core/gpu/portability.h"
#include "ops/pointwise/pointwise_math.h"

namespace opsched::pointwise::gpu_kernels {

// V consecutive storage elements, aligned for one load of up to 16 bytes.
template <typename S, int V>
struct alignas(sizeof(S) * V > 16 ? 16 : sizeof(S) * V) Pack {
  S v[V];
};

template <typename S, int V>
__device__ inline bool Aligned(const void* p) {
  return (reinterpret_cast<uintptr_t>(p) % alignof(Pack<S, V>)) == 0;
}

template <int V>
__device__ inline void LoadRun(ElementType type, const void* base, int64_t offset, int64_t step, float* x) {
  if (step == 0) {
    const float v = LoadElement(type, base, offset);
#pragma unroll
    for (int e = 0; e < V; ++e) x[e] = v;
    return;
  }
  if (V > 1 && step == 1) {
    if (type == ElementType::kF32) {
      const float* p = static_cast<const float*>(base) + offset;
      if (Aligned<float, V>(p)) {
        const Pack<float, V> q = *reinterpret_cast<const Pack<float, V>*>(p);
#pragma unroll
        for (int e = 0; e < V; ++e) x[e] = q.v[e];
        return;
      }
    } else {
      const uint16_t* p = static_cast<const uint16_t*>(base) + offset;
      if (Aligned<uint16_t, V>(p)) {
        const Pack<uint16_t, V> q = *reinterpret_cast<const Pack<uint16_t, V>*>(p);
#pragma unroll
        for (int e = 0; e < V; ++e) x[e] = type == ElementType::kF16 ? HalfToFloat(q.v[e]) : Bf16ToFloat(q.v[e]);
        return;
      }
    }
  }
#pragma unroll
  for (int e = 0; e < V; ++e) x[e] = LoadElement(type, base, offset + e * step);
}

// Stores V consecutive elements (outputs are contiguous).
template <int V>
__device__ inline void StoreRun(ElementType type, void* base, int64_t offset, const float* y) {
  if (V > 1) {
    if (type == ElementType::kF32) {
      float* p = static_cast<float*>(base) + offset;
      if (Aligned<float, V>(p)) {
        Pack<float, V> q;
#pragma unroll
        for (int e = 0; e < V; ++e) q.v[e] = y[e];
        *reinterpret_cast<Pack<float, V>*>(p) = q;
        return;
      }
    } else {
      uint16_t* p = static_cast<uint16_t*>(base) + offset;
      if (Aligned<uint16_t, V>(p)) {
        Pack<uint16_t, V> q;
#pragma unroll
        for (int e = 0; e < V; ++e) q.v[e] = type == ElementType::kF16 ? FloatToHalf(y[e]) : FloatToBf16(y[e]);
        *reinterpret_cast<Pack<uint16_t, V>*>(p) = q;
        return;
      }
    }
  }
#pragma unroll
  for (int e = 0; e < V; ++e) StoreElement(type, base, offset + e, y[e]);
}

// The V lanes of a group spread over its warp span in chunks of P consecutive elements
// (SpreadChunk): chunk c at offset + c * 32 * P * step. A broadcast (step 0) is one
// element; a contiguous, aligned tensor one packed load a chunk (4 or 8 elements: 16
// bytes of f32, 8 or 16 of f16 and bf16); otherwise single elements.
template <int V, int P>
__device__ inline void LoadSpread(ElementType type, const void* base, int64_t offset, int64_t step, float* x) {
  constexpr int kChunks = V / P;
  constexpr int64_t kSpan = 32 * P;
  if (step == 0) {
    const float v = LoadElement(type, base, offset);
#pragma unroll
    for (int e = 0; e < V; ++e) x[e] = v;
    return;
  }
  if (step == 1) {
    if (type == ElementType::kF32) {
      const float* p = static_cast<const float*>(base) + offset;
      if (Aligned<float, P>(p)) {
#pragma unroll
        for (int c = 0; c < kChunks; ++c) {
          const Pack<float, P> q = *reinterpret_cast<const Pack<float, P>*>(p + c * kSpan);
#pragma unroll
          for (int e = 0; e < P; ++e) x[c * P + e] = q.v[e];
        }
        return;
      }
    } else {
      const uint16_t* p = static_cast<const uint16_t*>(base) + offset;
      if (Aligned<uint16_t, P>(p)) {
#pragma unroll
        for (int c = 0; c < kChunks; ++c) {
          const Pack<uint16_t, P> q = *reinterpret_cast<const Pack<uint16_t, P>*>(p + c * kSpan);
#pragma unroll
          for (int e = 0; e < P; ++e) {
            x[c * P + e] = type == ElementType::kF16 ? HalfToFloat(q.v[e]) : Bf16ToFloat(q.v[e]);
          }
        }
        return;
      }
    }
  }
#pragma unroll
  for (int c = 0; c < kChunks; ++c) {
#pragma unroll
    for (int e = 0; e < P; ++e) x[c * P + e] = LoadElement(type, base, offset + (c * kSpan + e) * step);
  }
}

// Stores a group's V lanes spread over its warp span (LoadSpread; outputs are contiguous).
template <int V, int P>
__device__ inline void StoreSpread(ElementType type, void* base, int64_t offset, const float* y) {
  constexpr int kChunks = V / P;
  constexpr int64_t kSpan = 32 * P;
  if (type == ElementType::kF32) {
    float* p = static_cast<float*>(base) + offset;
    if (Aligned<float, P>(p)) {
#pragma unroll
      for (int c = 0; c < kChunks; ++c) {
        Pack<float, P> q;
#pragma unroll
        for (int e = 0; e < P; ++e) q.v[e] = y[c * P + e];
        *reinterpret_cast<Pack<float, P>*>(p + c * kSpan) = q;
      }
      return;
    }
  } else {
    uint16_t* p = static_cast<uint16_t*>(base) + offset;
    if (Aligned<uint16_t, P>(p)) {
#pragma unroll
      for (int c = 0; c < kChunks; ++c) {
        Pack<uint16_t, P> q;
#pragma unroll
        for (int e = 0; e < P; ++e) {
          q.v[e] = type == ElementType::kF16 ? FloatToHalf(y[c * P + e]) : FloatToBf16(y[c * P + e]);
        }
        *reinterpret_cast<Pack<uint16_t, P>*>(p + c * kSpan) = q;
      }
      return;
    }
  }
#pragma unroll
  for (int c = 0; c < kChunks; ++c) {
#pragma unroll
    for (int e = 0; e < P; ++e) StoreElement(type, base, offset + c * kSpan + e, y[c * P + e]);
  }
}

// A group's V lanes of one operand as the launch lays them out: spread over the warp span
// in chunks of `spread` (4 or 8, at 16 lanes: SpreadChunk) or, with `spread` 0 (and at
// fewer lanes), consecutive.
template <int V>
__device__ inline void LoadLanes(int spread, ElementType type, const void* base, int64_t offset, int64_t step,
                                 float* x) {
  if constexpr (V == 16) {
    if (spread == 4) return LoadSpread<V, 4>(type, base, offset, step, x);
    if (spread == 8) return LoadSpread<V, 8>(type, base, offset, step, x);
  }
  LoadRun<V>(type, base, offset, step, x);
}

// Stores a group's V lanes laid out as LoadLanes reads them.
template <int V>
__device__ inline void StoreLanes(int spread, ElementType type, void* base, int64_t offset, const float* y) {
  if constexpr (V == 16) {
    if (spread == 4) return StoreSpread<V, 4>(type, base, offset, y);
    if (spread == 8) return StoreSpread<V, 8>(type, base, offset, y);
  }
  StoreRun<V>(type, base, offset, y);
}

// Blocks for `work` units of `per_block` each, at most 16 waves of 2048 threads per SM
// (grid-stride loops take the rest).
inline unsigned GridFor(int64_t work, int64_t per_block) {
  int64_t blocks = (work + per_block - 1) / per_block;
  if (blocks < 1) blocks = 1;
  if (blocks > (int64_t(1) << 20)) blocks = int64_t(1) << 20;
  return static_cast<unsigned>(blocks);
}

}  // namespace opsched::pointwise::gpu_kernels
