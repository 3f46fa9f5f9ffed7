// Batch-norm inference (pointwise_batchnorm.h) without bytecode: a grid-stride loop over
// groups of V consecutive elements, one kernel per element type and V (the activation is
// a warp-uniform switch per group). A thread keeps the mean, scale and shift of its
// group's channels in registers and reads them again only when its next group lies in
// other channels; where inner is 1 (channels-last) each block first computes every
// channel's statistics into shared memory, and the grid (about one wave) is sized so that
// a thread's groups all fall on the same V channels, which it then reads once.
#include <algorithm>

#include "ops/pointwise/pointwise_batchnorm_math.h"
#include "ops/pointwise/pointwise_cuda.h"
#include "ops/pointwise/pointwise_cuda_common.cuh"

namespace opsched::pointwise::gpu_kernels {
namespace {

// Param k's element type in bits 2k..2k+1 of `types`, its channel stride in bit 8+k; bit
// 12: the gate (g as sigmoid(g)).
__device__ inline float ParamOf(const void* p, uint32_t types, int k, uint32_t c) {
  const ElementType t = static_cast<ElementType>((types >> (2 * k)) & 3u);
  return LoadElement(t, p, (types >> (8 + k)) & 1u ? int64_t(c) : 0);
}

// Not inlined: inlined into every lane of every kernel (with an activation a template
// argument as well), nvcc's cicc took 24 s a kernel, 10 minutes over the file.
// Arguments by value, so that the kernel's parameters stay in place (no stack copy).
__device__ __noinline__ ChannelStats StatsOf(const void* m, const void* v, const void* g, const void* b, uint32_t types,
                                             float eps, uint32_t c) {
  const void* param[4] = {m, v, g, b};
  float value[4] = {};
  unsigned present = 0;
#pragma unroll
  for (int k = 0; k < 4; ++k) {
    if (param[k] == nullptr) continue;
    present |= 1u << k;
    value[k] = ParamOf(param[k], types, k, c);
  }
  return FoldChannel(value, present, (types >> 12) & 1u, eps);
}

// The activation over a group's V values: one warp-uniform switch a group.
template <int V>
__device__ inline void Activate(OpCode act, float* y) {
  switch (act) {
    case OpCode::kCastF32:
      return;
    case OpCode::kRelu:
#pragma unroll
      for (int e = 0; e < V; ++e) y[e] = Relu(y[e]);
      return;
    case OpCode::kSilu:
#pragma unroll
      for (int e = 0; e < V; ++e) y[e] = Silu(y[e]);
      return;
    default:
#pragma unroll
      for (int e = 0; e < V; ++e) y[e] = Unary(act, y[e]);
  }
}

// Channels-last statistics staged in shared memory by the block (mean, scale, shift of
// every channel: 12 bytes each), up to this many channels (48 KiB).
constexpr int64_t kMaxStagedChannels = 4096;

// per_lane: the V elements of a group are V channels (inner 1); else one channel.
// staged: per_lane with the statistics of every channel first computed into shared
// memory by the block's threads together (a thread computing its V channels' itself
// waited on V calls in a row: the bf16 channels-last line took 150 us, 77 hoisted).
template <ElementType T, int V>
__global__ void __launch_bounds__(MaxBatchNormBlock(V)) BatchNormKernel(const BatchNormArgs a) {
  extern __shared__ float staged_stats[];
  const bool per_lane = a.inner == 1;
  const bool staged = per_lane && a.channels <= kMaxStagedChannels;
  const uint32_t groups = static_cast<uint32_t>(a.numel / V);
  const uint32_t stride = gridDim.x * blockDim.x;
  const uint32_t channels = static_cast<uint32_t>(a.channels);
  const uint32_t inner = static_cast<uint32_t>(a.inner);
  float mean[V], scale[V], shift[V];
  uint32_t types = 0;
  for (int k = 0; k < 4; ++k) {
    types |= (uint32_t(a.param_type[k]) << (2 * k)) | (uint32_t(a.channel_stride[k] != 0) << (8 + k));
  }
  types |= uint32_t(a.gate) << 12;
  uint32_t cached = 0xffffffffu;  // the first channel of the statistics held
  float* const staged_mean = staged_stats;
  float* const staged_scale = staged_stats + channels;
  float* const staged_shift = staged_stats + 2 * channels;
  if (staged) {
    for (uint32_t c = threadIdx.x; c < channels; c += blockDim.x) {
      const ChannelStats st = StatsOf(a.param[0], a.param[1], a.param[2], a.param[3], types, a.eps, c);
      staged_mean[c] = st.mean;
      staged_scale[c] = st.scale;
      staged_shift[c] = st.shift;
    }
    __syncthreads();
  }
  for (uint32_t g = blockIdx.x * blockDim.x + threadIdx.x; g < groups; g += stride) {
    const uint32_t i = g * V;
    const uint32_t c0 = per_lane ? i % channels : (i / inner) % channels;
    if (c0 != cached) {
      cached = c0;
      if (staged) {
#pragma unroll
        for (int e = 0; e < V; ++e) {
          mean[e] = staged_mean[c0 + e];
          scale[e] = staged_scale[c0 + e];
          shift[e] = staged_shift[c0 + e];
        }
      } else if (per_lane) {
#pragma unroll
        for (int e = 0; e < V; ++e) {
          const ChannelStats st = StatsOf(a.param[0], a.param[1], a.param[2], a.param[3], types, a.eps, c0 + e);
          mean[e] = st.mean;
          scale[e] = st.scale;
          shift[e] = st.shift;
        }
      } else {
        const ChannelStats st = StatsOf(a.param[0], a.param[1], a.param[2], a.param[3], types, a.eps, c0);
        mean[0] = st.mean;
        scale[0] = st.scale;
        shift[0] = st.shift;
#pragma unroll
        for (int e = 1; e < V; ++e) {
          mean[e] = mean[0];
          scale[e] = scale[0];
          shift[e] = shift[0];
        }
      }
    }
    float x[V];
    LoadRun<V>(T, a.x, i, 1, x);
#pragma unroll
    for (int e = 0; e < V; ++e) x[e] = __fadd_rn(__fmul_rn(x[e] - mean[e], scale[e]), shift[e]);
    Activate<V>(a.act, x);
    StoreRun<V>(T, a.out, i, x);
  }
}

// The threads of a channels-last launch: about one wave of an H100 (132 SMs of 2048).
constexpr int kStagedThreads = 262144;

uint32_t Gcd(uint32_t a, uint32_t b) {
  while (b != 0) {
    const uint32_t t = a % b;
    a = b;
    b = t;
  }
  return a;
}

template <ElementType T, int V>
gpuError_t LaunchTyped(const BatchNormArgs& a, const LaunchConfig& c, gpuStream_t stream) {
  const int64_t groups = a.numel / V;
  unsigned grid = GridFor(groups, int64_t(c.block) * c.items);
  size_t shared = 0;
  if (a.inner == 1) {
    // About one wave of threads (each block stages every channel's statistics once),
    // every grid step a multiple of the channels: a thread's groups keep their channels.
    grid = std::min<unsigned>(grid, std::max(1, kStagedThreads / c.block));
    const uint32_t per_channels = static_cast<uint32_t>(a.channels / V);  // groups per row
    const uint32_t q = per_channels / Gcd(per_channels, static_cast<uint32_t>(c.block));
    if (q > 1 && q <= 4096) grid = static_cast<unsigned>((int64_t(grid) + q - 1) / q * q);
    if (a.channels <= kMaxStagedChannels) shared = static_cast<size_t>(a.channels) * 3 * sizeof(float);
  }
  BatchNormKernel<T, V><<<grid, c.block, shared, stream>>>(a);
  return gpuGetLastError();
}

template <ElementType T>
gpuError_t LaunchVector(const BatchNormArgs& a, const LaunchConfig& c, gpuStream_t stream) {
  switch (BatchNormVector(a, c.vector)) {
    case 16:
      if constexpr (T != ElementType::kF32) return LaunchTyped<T, 16>(a, c, stream);
      return gpuErrorInvalidValue;
    case 8: return LaunchTyped<T, 8>(a, c, stream);
    case 4: return LaunchTyped<T, 4>(a, c, stream);
    case 2: return LaunchTyped<T, 2>(a, c, stream);
    default: return LaunchTyped<T, 1>(a, c, stream);
  }
}

}  // namespace

int BatchNormVector(const BatchNormArgs& a, int vector) {
  const int64_t run = a.inner > 1 ? a.inner : a.channels;
  if (a.type != ElementType::kF32 && vector >= 16 && run % 16 == 0) return 16;  // 32 bytes of f16 or bf16
  for (int v : {8, 4, 2}) {
    if (v <= vector && run % v == 0) return v;
  }
  return 1;
}

gpuError_t LaunchBatchNorm(const BatchNormArgs& a, const LaunchConfig& c, gpuStream_t stream) {
  if (a.numel == 0) return gpuSuccess;
  if (a.numel >= (int64_t(1) << 32) || a.channels < 1 || a.inner < 1 || c.block < 1 ||
      c.block > MaxBatchNormBlock(BatchNormVector(a, c.vector)) || c.items < 1) {
    return gpuErrorInvalidValue;
  }
  switch (a.act) {
    case OpCode::kCastF32:
    case OpCode::kRelu:
    case OpCode::kGelu:
    case OpCode::kGeluTanh:
    case OpCode::kSilu:
    case OpCode::kSigmoid:
    case OpCode::kTanh:
      break;
    default:
      return gpuErrorInvalidValue;
  }
  switch (a.type) {
    case ElementType::kF16: return LaunchVector<ElementType::kF16>(a, c, stream);
    case ElementType::kBF16: return LaunchVector<ElementType::kBF16>(a, c, stream);
    default: return LaunchVector<ElementType::kF32>(a, c, stream);
  }
}

}  // namespace opsched::pointwise::gpu_kernels
