// Batch-norm inference (pointwise_batchnorm.h) without bytecode: a grid-stride loop over
// groups of V consecutive elements, one kernel per element type, V, layout (kPerLane:
// channels-last) and whether the plan clamps or has a constant factor (kGeneral; the
// activation is a warp-uniform switch per group). A thread keeps the mean, scale and
// shift of its group's channels in registers and reads them again only when its next
// group lies in other channels; where inner is 1 (channels-last) the grid (one wave of
// the device) is sized so that a thread's groups all fall on the same V channels, each
// block first computes the statistics of the channels its threads read into shared
// memory, and a thread loads several groups before it computes any (GroupsAhead). After
// a hoisted plan's first pass the kernel is that pass's programmatic dependent.
#include <algorithm>

#include "core/gpu/dependent_launch.cuh"
#include "core/gpu/fast_divmod.h"
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
// The plan's constant factor is applied by the general kernel after the call (factor *
// scale, as FoldChannel does), so that the plain kernel's calls stay as they were.
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

// The clamps after the activation (none, or one or two max/min with a constant, the
// inner first): warp-uniform branches a group, each lane as the interpreter's Binary.
template <int V>
__device__ inline void Clamp(const Bound (&bound)[kMaxBounds], float* y) {
#pragma unroll
  for (int k = 0; k < kMaxBounds; ++k) {
    const OpCode op = bound[k].op;
    if (op == OpCode::kCastF32) return;
    const float c = bound[k].value;
    const bool first = bound[k].value_first;
    if (op == OpCode::kMax) {
#pragma unroll
      for (int e = 0; e < V; ++e) y[e] = first ? Max(c, y[e]) : Max(y[e], c);
    } else {
#pragma unroll
      for (int e = 0; e < V; ++e) y[e] = first ? Min(c, y[e]) : Min(y[e], c);
    }
  }
}

// Channels-last statistics staged in shared memory by the block (mean, scale, shift of
// each channel it stages: 12 bytes each), up to this many channels (48 KiB).
constexpr int64_t kMaxStagedChannels = 4096;

// The general kernel's staging reads this many channels' parameters before folding any
// (loads in flight; a call per channel waits on each in turn).
constexpr int kStagedAhead = 4;

// Stages channels first + j (mod channels), j < span, into the block's shared memory at
// j, each folded with the plan's constant factor.
__device__ inline void StageChannels(const BatchNormArgs& a, uint32_t types, uint32_t first, uint32_t span,
                                     float* mean, float* scale, float* shift) {
  const uint32_t channels = static_cast<uint32_t>(a.channels);
  unsigned present = 0;
#pragma unroll
  for (int k = 0; k < 4; ++k) present |= a.param[k] != nullptr ? 1u << k : 0u;
  for (uint32_t j0 = threadIdx.x; j0 < span; j0 += kStagedAhead * blockDim.x) {
    float value[kStagedAhead][4] = {};
#pragma unroll
    for (int u = 0; u < kStagedAhead; ++u) {
      const uint32_t j = j0 + u * blockDim.x;
      if (j >= span) break;
      uint32_t c = first + j;
      if (c >= channels) c -= channels;
#pragma unroll
      for (int k = 0; k < 4; ++k) {
        if (present & (1u << k)) value[u][k] = ParamOf(a.param[k], types, k, c);
      }
    }
#pragma unroll
    for (int u = 0; u < kStagedAhead; ++u) {
      const uint32_t j = j0 + u * blockDim.x;
      if (j >= span) break;
      const ChannelStats st = FoldChannel(value[u], present, (types >> 12) & 1u, a.eps, a.factor);
      mean[j] = st.mean;
      scale[j] = st.scale;
      shift[j] = st.shift;
    }
  }
}

// Groups of x a thread of the channels-last kernel loads before it computes any: 16
// lanes (64 bytes of f32: 4 groups of 4 lanes, 2 of 8), at most 4 groups. With one load
// in flight a thread, one wave of threads kept too few bytes in flight to fill the
// H200's memory (line 15 of pointwise.txt: DRAM 58% busy, against 75% for the bias+GELU
// chain kernel, whose grid is not one wave). More lanes spill: the kernel has 64
// registers a thread (blocks of up to 1024).
template <int V>
constexpr int GroupsAhead() {
  static_assert(V >= 1 && V <= 16, "V is 1, 2, 4, 8 or 16");
  return 16 / V < 4 ? 16 / V : 4;
}

// kPerLane: the V elements of a group are V channels (inner 1; channels-last); else one
// channel (NCHW runs). Their own kernels: two groups a step in the one kernel made every
// NCHW chain slower on the H100 (up to 1.24x; docs/ops/pointwise.md).
// staged (span > 0, kPerLane): the statistics first computed into shared memory by the
// block's threads together (a thread computing its V channels' itself waited on V calls
// in a row: the bf16 channels-last line took 150 us, 77 hoisted); span is every channel.
// kGeneral: the plan clamps after the activation or has a constant factor; the launch
// then may set span below the channels: where a thread's channels never change (each
// grid step a multiple of the channels) and a block's threads read fewer than all, the
// block stages only the blockDim * V channels from its first one (mod channels), with
// loads in flight. Its own kernel: with the clamps' branch and the factor in every
// kernel, and then this staging as well, the batch-norm chains that use none of them ran
// 2-32% slower on the H100 (the kernels took 44-57 registers where they take 29-47).
// A hoisted plan launches the kernel as the last first pass's dependent
// (LaunchDependent): it reads the statistics (the pass's output) only after
// GridDependencyWait; the channels-last kernel issues its first loads of x before it.
template <ElementType T, int V, bool kGeneral, bool kPerLane>
__global__ void __launch_bounds__(MaxBatchNormBlock(V)) BatchNormKernel(const BatchNormArgs a, uint32_t span,
                                                                        FastDivmod by_inner, FastDivmod by_channels) {
  extern __shared__ float staged_stats[];
  const bool staged = kPerLane && span > 0;
  const uint32_t groups = static_cast<uint32_t>(a.numel / V);
  const uint32_t stride = gridDim.x * blockDim.x;
  const uint32_t channels = static_cast<uint32_t>(a.channels);
  float mean[V], scale[V], shift[V];
  uint32_t types = 0;
  for (int k = 0; k < 4; ++k) {
    types |= (uint32_t(a.param_type[k]) << (2 * k)) | (uint32_t(a.channel_stride[k] != 0) << (8 + k));
  }
  types |= uint32_t(a.gate) << 12;
  uint32_t cached = 0xffffffffu;  // the first channel of the statistics held
  const uint32_t staged_count = kGeneral ? span : channels;
  float* const staged_mean = staged_stats;
  float* const staged_scale = staged_stats + staged_count;
  float* const staged_shift = staged_stats + 2 * staged_count;
  // The block's first channel: staged index j is channel first + j (mod channels).
  uint32_t first = 0;
  if constexpr (kGeneral) first = span < channels ? (blockIdx.x * blockDim.x * V) % channels : 0;
  // The statistics of the group at element i: read again only when its channels differ
  // from the last group's.
  auto channels_of = [&](uint32_t i) {
    // The group's channel, (i / inner) % channels, by multiplies: with two divisions a
    // group the batch-norm chains took 1.002-1.031x the time on the H100.
    const uint32_t run = kPerLane ? i : by_inner.Div(i);
    const uint32_t c0 = run - by_channels.Div(run) * channels;
    if (c0 == cached) return;
    cached = c0;
    if (staged) {
      uint32_t j0 = c0;
      if constexpr (kGeneral) j0 = c0 >= first ? c0 - first : c0 + channels - first;
#pragma unroll
      for (int e = 0; e < V; ++e) {
        mean[e] = staged_mean[j0 + e];
        scale[e] = staged_scale[j0 + e];
        shift[e] = staged_shift[j0 + e];
      }
    } else if (kPerLane) {
#pragma unroll
      for (int e = 0; e < V; ++e) {
        const ChannelStats st = StatsOf(a.param[0], a.param[1], a.param[2], a.param[3], types, a.eps, c0 + e);
        mean[e] = st.mean;
        scale[e] = kGeneral ? a.factor * st.scale : st.scale;
        shift[e] = st.shift;
      }
    } else {
      const ChannelStats st = StatsOf(a.param[0], a.param[1], a.param[2], a.param[3], types, a.eps, c0);
      mean[0] = st.mean;
      scale[0] = kGeneral ? a.factor * st.scale : st.scale;
      shift[0] = st.shift;
#pragma unroll
      for (int e = 1; e < V; ++e) {
        mean[e] = mean[0];
        scale[e] = scale[0];
        shift[e] = shift[0];
      }
    }
  };
  // Normalises, activates, clamps and stores the group at element i (its statistics held).
  auto finish = [&](uint32_t i, float* x) {
#pragma unroll
    for (int e = 0; e < V; ++e) x[e] = __fadd_rn(__fmul_rn(x[e] - mean[e], scale[e]), shift[e]);
    Activate<V>(a.act, x);
    if constexpr (kGeneral) Clamp<V>(a.bound, x);
    StoreRun<V>(T, a.out, i, x);
  };
  if constexpr (kPerLane) {
    // kAhead groups a step (g, g + stride, ...), all loaded before any is computed; the
    // steps in 64 bits (g + kAhead * stride may pass 2^32 where numel nears it).
    constexpr int kAhead = GroupsAhead<V>();
    float x[kAhead][V];
    uint64_t g = blockIdx.x * blockDim.x + threadIdx.x;
    auto full = [&] { return g + uint64_t(kAhead - 1) * stride < groups; };
    auto load = [&] {
#pragma unroll
      for (int u = 0; u < kAhead; ++u) LoadRun<V>(T, a.x, static_cast<uint32_t>(g + uint64_t(u) * stride) * V, 1, x[u]);
    };
    if (full()) load();  // x is no output of the kernel before (a first pass)
    gpu::GridDependencyWait();
    if (staged) {
      if constexpr (kGeneral) {
        StageChannels(a, types, first, span, staged_mean, staged_scale, staged_shift);
      } else {
        for (uint32_t c = threadIdx.x; c < channels; c += blockDim.x) {
          const ChannelStats st = StatsOf(a.param[0], a.param[1], a.param[2], a.param[3], types, a.eps, c);
          staged_mean[c] = st.mean;
          staged_scale[c] = st.scale;
          staged_shift[c] = st.shift;
        }
      }
      __syncthreads();
    }
    while (full()) {
#pragma unroll
      for (int u = 0; u < kAhead; ++u) {
        const uint32_t i = static_cast<uint32_t>(g + uint64_t(u) * stride) * V;
        channels_of(i);
        finish(i, x[u]);
      }
      g += uint64_t(kAhead) * stride;
      if (full()) load();
    }
    for (; g < groups; g += stride) {
      const uint32_t i = static_cast<uint32_t>(g) * V;
      LoadRun<V>(T, a.x, i, 1, x[0]);
      channels_of(i);
      finish(i, x[0]);
    }
  } else {
    gpu::GridDependencyWait();
    for (uint32_t g = blockIdx.x * blockDim.x + threadIdx.x; g < groups; g += stride) {
      const uint32_t i = g * V;
      channels_of(i);
      float x[V];
      LoadRun<V>(T, a.x, i, 1, x);
      finish(i, x);
    }
  }
}

// The threads of a channels-last launch where Prepare measured no wave: about one wave of
// an H100 at full occupancy (132 SMs of 2048). The 8-lane kernels hold 4-5 blocks of 256
// an SM, so the occupancy query's one wave (BatchNormWaveBlocks) took the f16
// channels-last chains 0.945x the time on the H100.
constexpr int kStagedThreads = 262144;

uint32_t Gcd(uint32_t a, uint32_t b) {
  while (b != 0) {
    const uint32_t t = a % b;
    a = b;
    b = t;
  }
  return a;
}

// The kernel for `a`: channels-last or not, general or not.
template <ElementType T, int V>
auto KernelFor(const BatchNormArgs& a, bool general) {
  if (a.inner == 1) return general ? BatchNormKernel<T, V, true, true> : BatchNormKernel<T, V, false, true>;
  return general ? BatchNormKernel<T, V, true, false> : BatchNormKernel<T, V, false, false>;
}

// Launches the kernel for `a` (channels-last: a grid of at most `wave` blocks, 0 for the
// H100's), as the dependent of the kernel before it where `dependent`; or, with
// `wave_blocks`, stores how many of its blocks one wave of the device holds (occupancy
// times SMs) and launches nothing.
template <ElementType T, int V>
gpuError_t LaunchTyped(const BatchNormArgs& a, const LaunchConfig& c, gpuStream_t stream, bool dependent, int wave,
                       int* wave_blocks) {
  const int64_t groups = a.numel / V;
  unsigned grid = GridFor(groups, int64_t(c.block) * c.items);
  bool general = a.factor != 1;
  for (const Bound& b : a.bound) general = general || b.op != OpCode::kCastF32;
  uint32_t span = 0;
  if (a.inner == 1) {
    // One wave of blocks (each block stages its channels' statistics once; the wave as
    // Prepare measured it, else the H100's 132 SMs of 2048 threads), every grid step a
    // multiple of the channels: a thread's groups keep their channels.
    grid = std::min<unsigned>(grid, std::max(1, wave > 0 ? wave : kStagedThreads / c.block));
    const uint32_t per_channels = static_cast<uint32_t>(a.channels / V);  // groups per row
    const uint32_t q = per_channels / Gcd(per_channels, static_cast<uint32_t>(c.block));
    const bool fixed = q <= 4096;
    if (q > 1 && fixed) grid = grid >= q ? grid / q * q : q;
    // A block's threads read blockDim * V consecutive channels (mod channels) when fixed.
    const int64_t reads = fixed ? std::min<int64_t>(a.channels, int64_t(c.block) * V) : a.channels;
    const int64_t staged = general ? reads : a.channels;
    if (staged <= kMaxStagedChannels) span = static_cast<uint32_t>(staged);
  }
  const size_t shared = static_cast<size_t>(span) * 3 * sizeof(float);
  if (wave_blocks != nullptr) {
    int device = 0, sms = 0, per_sm = 0;
    gpuError_t e = gpuGetDevice(&device);
    if (e == gpuSuccess) e = gpuDeviceGetAttribute(&sms, gpuDevAttrMultiProcessorCount, device);
    if (e == gpuSuccess) {
      const void* kernel = reinterpret_cast<const void*>(KernelFor<T, V>(a, general));
      e = gpuOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, kernel, c.block, shared);
    }
    *wave_blocks = e == gpuSuccess ? per_sm * sms : 0;
    return e;
  }
  const FastDivmod by_inner(static_cast<uint32_t>(a.inner)), by_channels(static_cast<uint32_t>(a.channels));
  const auto kernel = KernelFor<T, V>(a, general);
  if (dependent) return gpu::LaunchDependent(kernel, grid, c.block, shared, stream, a, span, by_inner, by_channels);
  kernel<<<grid, c.block, shared, stream>>>(a, span, by_inner, by_channels);
  return gpuGetLastError();
}

template <ElementType T>
gpuError_t LaunchVector(const BatchNormArgs& a, const LaunchConfig& c, gpuStream_t stream, bool dependent, int wave,
                        int* wave_blocks) {
  switch (BatchNormVector(a, c.vector)) {
    case 16:
      if constexpr (T != ElementType::kF32) return LaunchTyped<T, 16>(a, c, stream, dependent, wave, wave_blocks);
      return gpuErrorInvalidValue;
    case 8: return LaunchTyped<T, 8>(a, c, stream, dependent, wave, wave_blocks);
    case 4: return LaunchTyped<T, 4>(a, c, stream, dependent, wave, wave_blocks);
    case 2: return LaunchTyped<T, 2>(a, c, stream, dependent, wave, wave_blocks);
    default: return LaunchTyped<T, 1>(a, c, stream, dependent, wave, wave_blocks);
  }
}

gpuError_t LaunchOrMeasure(const BatchNormArgs& a, const LaunchConfig& c, gpuStream_t stream, bool dependent, int wave,
                           int* wave_blocks) {
  switch (a.type) {
    case ElementType::kF16: return LaunchVector<ElementType::kF16>(a, c, stream, dependent, wave, wave_blocks);
    case ElementType::kBF16: return LaunchVector<ElementType::kBF16>(a, c, stream, dependent, wave, wave_blocks);
    default: return LaunchVector<ElementType::kF32>(a, c, stream, dependent, wave, wave_blocks);
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

gpuError_t LaunchBatchNorm(const BatchNormArgs& a, const LaunchConfig& c, gpuStream_t stream, int wave_blocks,
                           bool dependent) {
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
  for (const Bound& b : a.bound) {
    if (b.op != OpCode::kCastF32 && b.op != OpCode::kMax && b.op != OpCode::kMin) return gpuErrorInvalidValue;
  }
  return LaunchOrMeasure(a, c, stream, dependent, wave_blocks, nullptr);
}

int BatchNormWaveBlocks(const BatchNormArgs& a, const LaunchConfig& c) {
  if (a.inner != 1 || a.channels < 1 || c.block < 1 || c.block > MaxBatchNormBlock(BatchNormVector(a, c.vector))) {
    return 0;
  }
  int blocks = 0;
  if (LaunchOrMeasure(a, c, nullptr, false, 0, &blocks) != gpuSuccess) {
    (void)gpuGetLastError();  // a failed query leaves no error behind for the next launch
    return 0;
  }
  return blocks;
}

}  // namespace opsched::pointwise::gpu_kernels
