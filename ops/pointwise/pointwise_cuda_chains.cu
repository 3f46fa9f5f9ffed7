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

template <ElementType T, ChainKind K, OpCode A, int V>
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
    for (int k = 0; k < F::kOut; ++k) StoreRun<V>(T, a.out[k], i, y[k]);
  }
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
    ChainKernel<T, K, A, 8><<<GridFor(a.numel / 8, int64_t(c.block) * c.items), c.block, 0, stream>>>(a);
  } else if (c.vector >= 4 && fits(4)) {
    ChainKernel<T, K, A, 4><<<GridFor(a.numel / 4, int64_t(c.block) * c.items), c.block, 0, stream>>>(a);
  } else {
    ChainKernel<T, K, A, 1><<<GridFor(a.numel, int64_t(c.block) * c.items), c.block, 0, stream>>>(a);
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
  if (a.numel == 0) return gpuSuccess;
  switch (a.type) {
    case ElementType::kF16: return LaunchChainOf<ElementType::kF16>(a, c, stream);
    case ElementType::kBF16: return LaunchChainOf<ElementType::kBF16>(a, c, stream);
    default: return LaunchChainOf<ElementType::kF32>(a, c, stream);
  }
}

}  // namespace opsched::pointwise::gpu_kernels
