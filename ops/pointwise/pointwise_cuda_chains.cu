// The specialised-fused pointwise kernels: one templated kernel per chain of
// pointwise_match.h (bias+act, scale+residual, an activation alone, the LSTM cell), activation and
// element type, no bytecode. Every input is periodic in the row-major output order
// (full, a trailing bias, or one element), so a thread's V consecutive elements read V
// consecutive elements of every input that is not a single element (one packed load).
#include "core/element.h"
#include "ops/pointwise/pointwise_cuda.h"
#include "ops/pointwise/pointwise_cuda_common.cuh"

namespace opsched::pointwise::gpu_kernels {
namespace {

template <ChainKind K, OpCode A>
struct ChainFn;

template <OpCode A>
struct ChainFn<ChainKind::kBiasAct, A> {
  static constexpr int kIn = 2, kOut = 1;
  __device__ static void Apply(const float* x, float* y, float) { y[0] = Unary(A, x[0] + x[1]); }
};
template <OpCode A>
struct ChainFn<ChainKind::kScaleResidual, A> {
  static constexpr int kIn = 3, kOut = 1;
  __device__ static void Apply(const float* x, float* y, float) { y[0] = x[0] * x[1] + x[2]; }
};
template <OpCode A>
struct ChainFn<ChainKind::kScaleResidualConst, A> {
  static constexpr int kIn = 2, kOut = 1;
  __device__ static void Apply(const float* x, float* y, float s) { y[0] = x[0] * s + x[1]; }
};
template <OpCode A>
struct ChainFn<ChainKind::kActivation, A> {
  static constexpr int kIn = 1, kOut = 1;
  __device__ static void Apply(const float* x, float* y, float) { y[0] = Unary(A, x[0]); }
};
template <OpCode A>
struct ChainFn<ChainKind::kLstmCell, A> {
  static constexpr int kIn = 5, kOut = 2;
  // x: i, f, g, o, c; y: c', h (as pointwise_cpu_specialised.cc).
  __device__ static void Apply(const float* x, float* y, float) {
    const float c = Sigmoid(x[1]) * x[4] + Sigmoid(x[0]) * tanhf(x[2]);
    y[0] = c;
    y[1] = Sigmoid(x[3]) * tanhf(c);
  }
};

// V consecutive elements at `offset` of an address aligned for their pack (the launch
// checked the base; offsets are multiples of V): one or two 16-byte accesses, with no
// test of the address per group as LoadRun and StoreRun make.
template <ElementType T, int V>
__device__ inline void LoadPacked(const void* base, uint32_t offset, float* x) {
  if constexpr (T == ElementType::kF32) {
    const Pack<float, V> q = *reinterpret_cast<const Pack<float, V>*>(static_cast<const float*>(base) + offset);
#pragma unroll
    for (int e = 0; e < V; ++e) x[e] = q.v[e];
  } else {
    const Pack<uint16_t, V> q = *reinterpret_cast<const Pack<uint16_t, V>*>(static_cast<const uint16_t*>(base) + offset);
#pragma unroll
    for (int e = 0; e < V; ++e) x[e] = T == ElementType::kF16 ? HalfToFloat(q.v[e]) : Bf16ToFloat(q.v[e]);
  }
}

template <ElementType T, int V>
__device__ inline void StorePacked(void* base, uint32_t offset, const float* y) {
  if constexpr (T == ElementType::kF32) {
    Pack<float, V> q;
#pragma unroll
    for (int e = 0; e < V; ++e) q.v[e] = y[e];
    *reinterpret_cast<Pack<float, V>*>(static_cast<float*>(base) + offset) = q;
  } else {
    Pack<uint16_t, V> q;
#pragma unroll
    for (int e = 0; e < V; ++e) q.v[e] = T == ElementType::kF16 ? FloatToHalf(y[e]) : FloatToBf16(y[e]);
    *reinterpret_cast<Pack<uint16_t, V>*>(static_cast<uint16_t*>(base) + offset) = q;
  }
}

// kPacked: every tensor read or written V at a time is aligned for the pack (checked at
// launch), so the packed accesses need no test of the address per group, and a periodic
// input's position is i % period through a FastDivmod (a multiply-high and a shift, where
// the division by a run-time period took a reciprocal and its corrections). Launched for
// f16 and bf16 only: in one A/B session on the H200 it took the 16-bit chains of the
// tuned suite 2-9% faster (f16 bias+GELU-tanh 37.98 -> 34.93 us) and the f32 ones 1-2%
// slower (bias+GELU 64M 133.4 -> 136.4 us), where the packed loads were already issued
// and the kernel is memory-bound
// (docs/results/nvidia-h200/chain-packs-2026-11-29/).
template <ElementType T, ChainKind K, OpCode A, int V, bool kPacked>
__global__ void __launch_bounds__(1024) ChainKernel(const ChainArgs a) {
  using F = ChainFn<K, A>;
  const uint32_t groups = static_cast<uint32_t>(a.numel / V);
  const uint32_t stride = gridDim.x * blockDim.x;
  for (uint32_t g = blockIdx.x * blockDim.x + threadIdx.x; g < groups; g += stride) {
    const uint32_t i = g * V;
    float x[F::kIn][V], y[F::kOut][V];
#pragma unroll
    for (int k = 0; k < F::kIn; ++k) {
      const uint32_t period = static_cast<uint32_t>(a.period[k]);
      if (period == 1) {
        LoadRun<V>(T, a.in[k], 0, 0, x[k]);
      } else if constexpr (kPacked) {
        uint32_t q, at = i;
        if (period != static_cast<uint32_t>(a.numel)) a.by_period[k].DivMod(i, &q, &at);
        LoadPacked<T, V>(a.in[k], at, x[k]);
      } else {
        LoadRun<V>(T, a.in[k], period == a.numel ? i : i % period, 1, x[k]);
      }
    }
#pragma unroll
    for (int e = 0; e < V; ++e) {
      float xe[F::kIn], ye[F::kOut];
#pragma unroll
      for (int k = 0; k < F::kIn; ++k) xe[k] = x[k][e];
      F::Apply(xe, ye, a.constant);
#pragma unroll
      for (int k = 0; k < F::kOut; ++k) y[k][e] = ye[k];
    }
#pragma unroll
    for (int k = 0; k < F::kOut; ++k) {
      if constexpr (kPacked) {
        StorePacked<T, V>(a.out[k], i, y[k]);
      } else {
        StoreRun<V>(T, a.out[k], i, y[k]);
      }
    }
  }
}

// Every input read V at a time (not a single element) and every output aligned for a
// Pack of V storage elements S, as the packed accesses read and write them.
template <typename S, int V>
bool PacksAligned(const ChainArgs& a) {
  constexpr uintptr_t pack = alignof(Pack<S, V>);
  bool ok = true;
  for (int k = 0; k < a.inputs; ++k) ok = ok && (a.period[k] == 1 || reinterpret_cast<uintptr_t>(a.in[k]) % pack == 0);
  for (int k = 0; k < a.outputs; ++k) ok = ok && reinterpret_cast<uintptr_t>(a.out[k]) % pack == 0;
  return ok;
}

template <ElementType T, ChainKind K, OpCode A, int V>
void LaunchVector(const ChainArgs& a, const LaunchConfig& c, gpuStream_t stream) {
  const unsigned grid = GridFor(a.numel / V, int64_t(c.block) * c.items);
  if constexpr (V > 1 && T != ElementType::kF32) {
    if (PacksAligned<uint16_t, V>(a)) {
      ChainKernel<T, K, A, V, true><<<grid, c.block, 0, stream>>>(a);
      return;
    }
  }
  ChainKernel<T, K, A, V, false><<<grid, c.block, 0, stream>>>(a);
}

template <ElementType T, ChainKind K, OpCode A>
gpuError_t LaunchTyped(const ChainArgs& a, const LaunchConfig& c, gpuStream_t stream) {
  // V consecutive elements stay within every input's period.
  auto fits = [&](int v) {
    bool ok = a.numel % v == 0;
    for (int k = 0; k < a.inputs; ++k) ok = ok && (a.period[k] == 1 || a.period[k] % v == 0);
    return ok;
  };
  if (c.vector >= 8 && fits(8)) {
    LaunchVector<T, K, A, 8>(a, c, stream);
  } else if (c.vector >= 4 && fits(4)) {
    LaunchVector<T, K, A, 4>(a, c, stream);
  } else {
    LaunchVector<T, K, A, 1>(a, c, stream);
  }
  return gpuGetLastError();
}

// A chain with an activation: one kernel per activation.
template <ElementType T, ChainKind K>
gpuError_t LaunchAct(const ChainArgs& a, const LaunchConfig& c, gpuStream_t stream) {
  switch (a.act) {
    case OpCode::kRelu: return LaunchTyped<T, K, OpCode::kRelu>(a, c, stream);
    case OpCode::kGelu: return LaunchTyped<T, K, OpCode::kGelu>(a, c, stream);
    case OpCode::kGeluTanh: return LaunchTyped<T, K, OpCode::kGeluTanh>(a, c, stream);
    case OpCode::kSilu: return LaunchTyped<T, K, OpCode::kSilu>(a, c, stream);
    case OpCode::kSigmoid: return LaunchTyped<T, K, OpCode::kSigmoid>(a, c, stream);
    default: return LaunchTyped<T, K, OpCode::kTanh>(a, c, stream);
  }
}

template <ElementType T>
gpuError_t LaunchChainOf(const ChainArgs& a, const LaunchConfig& c, gpuStream_t stream) {
  switch (a.kind) {
    case ChainKind::kBiasAct: return LaunchAct<T, ChainKind::kBiasAct>(a, c, stream);
    case ChainKind::kActivation: return LaunchAct<T, ChainKind::kActivation>(a, c, stream);
    case ChainKind::kScaleResidual: return LaunchTyped<T, ChainKind::kScaleResidual, OpCode::kAdd>(a, c, stream);
    case ChainKind::kScaleResidualConst:
      return LaunchTyped<T, ChainKind::kScaleResidualConst, OpCode::kAdd>(a, c, stream);
    default: return LaunchTyped<T, ChainKind::kLstmCell, OpCode::kAdd>(a, c, stream);
  }
}

}  // namespace

gpuError_t LaunchChain(const ChainArgs& a, const LaunchConfig& c, gpuStream_t stream) {
  if (c.block < 1 || c.items < 1) return gpuErrorInvalidValue;  // GridFor divides by their product
  if (a.numel == 0) return gpuSuccess;
  switch (a.type) {
    case ElementType::kF16: return LaunchChainOf<ElementType::kF16>(a, c, stream);
    case ElementType::kBF16: return LaunchChainOf<ElementType::kBF16>(a, c, stream);
    default: return LaunchChainOf<ElementType::kF32>(a, c, stream);
  }
}

}  // namespace opsched::pointwise::gpu_kernels
