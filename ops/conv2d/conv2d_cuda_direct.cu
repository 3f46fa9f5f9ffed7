// Direct convolution for layers with few input channels per group (an MNIST first layer,
// a 16->32 3x3): latency-bound work where one fused kernel (convolution, bias,
// activation) beats a GEMM formulation plus separate epilogue kernels.
//
// Block (blockIdx.x, blockIdx.y): blockDim.x consecutive output pixels times one chunk
// of CPT filters of one group. The chunk's filters go to shared memory as
// [tap][c'][CPT] so that the CPT weights multiplied with one x value are one broadcast
// vector load; each thread then walks its pixel's receptive field once, reusing every x
// value for CPT filters.
#include <algorithm>
#include <cstdint>

#include "core/gpu/fast_divmod.h"
#include "ops/conv2d/conv2d_cuda.h"
#include "ops/conv2d/conv2d_math.h"

namespace opsched::conv2d::gpu_kernels {
namespace {

inline constexpr int kMaxBlock = 512;

struct DirectGeometry {
  FastDivmod pq;      // pixel -> (n, p*Q + q)
  FastDivmod q;       // p*Q + q -> (p, q)
  uint32_t pixels;    // N*P*Q
  int chunks;         // filter chunks per group: ceil(K/G / CPT)
  int taps_c;         // C/G*R*S, the weights of one filter
  bool vector_c;      // x loads four channels at a time (VectorChannels)
};

// The CPT weights of one (tap, c') as registers, read as vectors where CPT allows.
template <int CPT>
__device__ __forceinline__ void LoadWeights(const float* w, float (&out)[CPT]) {
  if constexpr (CPT % 4 == 0) {
#pragma unroll
    for (int f = 0; f < CPT; f += 4) {
      const float4 v = *reinterpret_cast<const float4*>(w + f);
      out[f] = v.x;
      out[f + 1] = v.y;
      out[f + 2] = v.z;
      out[f + 3] = v.w;
    }
  } else if constexpr (CPT == 2) {
    const float2 v = *reinterpret_cast<const float2*>(w);
    out[0] = v.x;
    out[1] = v.y;
  } else {
#pragma unroll
    for (int f = 0; f < CPT; ++f) out[f] = w[f];
  }
}

// Stages the chunk's filters (zeros past the group's last filter) as [tap][c'][CPT].
template <int CPT>
__device__ void StageFilters(const Problem& p, const DirectGeometry& g, int64_t k0, int count, float* sw) {
  const float* __restrict__ w = static_cast<const float*>(p.wt);
  const int cg = static_cast<int>(p.c / p.groups);
  const int s_count = static_cast<int>(p.s);
  const int total = CPT * g.taps_c;
  for (int i = threadIdx.x; i < total; i += blockDim.x) {
    const int j = i / CPT;  // tap * C/G + c'
    const int f = i - j * CPT;
    const int tap = j / cg;
    const int c = j - tap * cg;
    const int r = tap / s_count;
    const int s = tap - r * s_count;
    sw[i] = f < count ? w[(k0 + f) * p.w_strides[0] + c * p.w_strides[1] + r * p.w_strides[2] +
                          s * p.w_strides[3]]
                      : 0.0f;
  }
}

template <int CPT>
__device__ __forceinline__ void Store(const Problem& p, int64_t k0, int count, int64_t offset, float (&acc)[CPT]) {
  float* __restrict__ y = static_cast<float*>(p.y);
  if (p.kind == Kind::kBiasActivation) {
    const float* __restrict__ b = static_cast<const float*>(p.b);
#pragma unroll
    for (int f = 0; f < CPT; ++f) {
      if (f < count) acc[f] = Activate(p.act, acc[f] + b[(k0 + f) * p.b_stride]);
    }
  }
  const int64_t ks = p.y_strides[1];
  if constexpr (CPT % 4 == 0) {
    // nhwc: the CPT channels of a pixel are contiguous.
    if (ks == 1 && count == CPT && (reinterpret_cast<uintptr_t>(y + offset) & 15) == 0) {
#pragma unroll
      for (int f = 0; f < CPT; f += 4) {
        *reinterpret_cast<float4*>(y + offset + f) = make_float4(acc[f], acc[f + 1], acc[f + 2], acc[f + 3]);
      }
      return;
    }
  }
#pragma unroll
  for (int f = 0; f < CPT; ++f) {
    if (f < count) y[offset + f * ks] = acc[f];
  }
}

// Adds one tap's products: CPT filters times the group's channels at x + xp.
template <int CPT>
__device__ __forceinline__ void AccumulateTap(const float* __restrict__ xp, int64_t xc, int64_t cg, bool vector_c,
                                              const float* wtap, float (&acc)[CPT]) {
  if (vector_c) {  // nhwc: four neighbouring channels per load
    for (int64_t c = 0; c < cg; c += 4) {
      const float4 v = *reinterpret_cast<const float4*>(xp + c);
      const float vs[4] = {v.x, v.y, v.z, v.w};
#pragma unroll
      for (int u = 0; u < 4; ++u) {
        float wv[CPT];
        LoadWeights<CPT>(wtap + (c + u) * CPT, wv);
#pragma unroll
        for (int f = 0; f < CPT; ++f) acc[f] = fmaf(vs[u], wv[f], acc[f]);
      }
    }
    return;
  }
#pragma unroll 4
  for (int64_t c = 0; c < cg; ++c) {
    const float v = xp[c * xc];
    float wv[CPT];
    LoadWeights<CPT>(wtap + c * CPT, wv);
#pragma unroll
    for (int f = 0; f < CPT; ++f) acc[f] = fmaf(v, wv[f], acc[f]);
  }
}

// FR x FS: the filter size when fixed at compile time (so the taps unroll and their
// loads are all in flight together), 0 x 0 for any size.
template <int CPT, int FR, int FS>
__global__ void __launch_bounds__(kMaxBlock) DirectKernel(Problem p, DirectGeometry g) {
  extern __shared__ float4 shared_vec[];  // float4 so that vector reads are aligned
  float* sw = reinterpret_cast<float*>(shared_vec);

  const int group = static_cast<int>(blockIdx.y) / g.chunks;
  const int chunk = static_cast<int>(blockIdx.y) - group * g.chunks;
  const int64_t kg = p.k / p.groups;
  const int first = chunk * CPT;  // within the group
  const int count = static_cast<int>(kg - first < CPT ? kg - first : CPT);
  const int64_t k0 = group * kg + first;
  StageFilters<CPT>(p, g, k0, count, sw);
  __syncthreads();

  const uint32_t pixel = blockIdx.x * blockDim.x + threadIdx.x;
  if (pixel >= g.pixels) return;
  uint32_t n, pq, op, oq;
  g.pq.DivMod(pixel, &n, &pq);
  g.q.DivMod(pq, &op, &oq);

  const int64_t cg = p.c / p.groups;
  const float* __restrict__ x =
      static_cast<const float*>(p.x) + n * p.x_strides[0] + group * cg * p.x_strides[1];
  const int h0 = static_cast<int>(op * p.stride_h - p.pad_h);
  const int w0 = static_cast<int>(oq * p.stride_w - p.pad_w);
  const int rows = FR > 0 ? FR : static_cast<int>(p.r);
  const int cols = FS > 0 ? FS : static_cast<int>(p.s);
  const int dh = static_cast<int>(p.dil_h), dw = static_cast<int>(p.dil_w);
  const int height = static_cast<int>(p.h), width = static_cast<int>(p.w);

  float acc[CPT];
#pragma unroll
  for (int f = 0; f < CPT; ++f) acc[f] = 0.0f;

  // With FR, FS fixed the compiler unrolls these loops on its own (constant trip counts).
  for (int r = 0; r < rows; ++r) {
    const int h = h0 + r * dh;
    if (h < 0 || h >= height) continue;
    for (int s = 0; s < cols; ++s) {
      const int w = w0 + s * dw;
      if (w < 0 || w >= width) continue;  // a zero padding tap
      AccumulateTap<CPT>(x + h * p.x_strides[2] + w * p.x_strides[3], p.x_strides[1], cg, g.vector_c,
                         sw + (r * cols + s) * cg * CPT, acc);
    }
  }
  const int64_t offset = n * p.y_strides[0] + k0 * p.y_strides[1] + int64_t(op) * p.y_strides[2] +
                         int64_t(oq) * p.y_strides[3];
  Store<CPT>(p, k0, count, offset, acc);
}

template <int CPT>
gpuError_t Launch(const Problem& p, const DirectGeometry& g, dim3 grid, int block, size_t shared,
                  gpuStream_t stream) {
  if (p.r == 3 && p.s == 3) {
    DirectKernel<CPT, 3, 3><<<grid, block, shared, stream>>>(p, g);
  } else if (p.r == 1 && p.s == 1) {
    DirectKernel<CPT, 1, 1><<<grid, block, shared, stream>>>(p, g);
  } else {
    DirectKernel<CPT, 0, 0><<<grid, block, shared, stream>>>(p, g);
  }
  return gpuGetLastError();
}

// nhwc x whose channels are contiguous and 16-byte aligned at every pixel and group.
bool VectorChannels(const Problem& p) {
  const int64_t* xs = p.x_strides;
  return p.layout == Layout::kNhwc && xs[1] == 1 && (p.c / p.groups) % 4 == 0 && xs[0] % 4 == 0 &&
         xs[2] % 4 == 0 && xs[3] % 4 == 0 && (reinterpret_cast<uintptr_t>(p.x) & 15) == 0;
}

bool ValidChannels(int cpt) { return cpt == 1 || cpt == 2 || cpt == 4 || cpt == 8 || cpt == 16; }

}  // namespace

size_t DirectSharedBytes(const Problem& p, int channels_per_thread) {
  return size_t(channels_per_thread) * size_t(p.reduction_length()) * sizeof(float);
}

bool DirectFits(const Problem& p, const DirectConfig& c) {
  if (!ValidChannels(c.channels_per_thread) || c.block < 32 || c.block > kMaxBlock || c.block % 32 != 0) {
    return false;
  }
  if (p.groups < 1 || p.k % p.groups != 0 || p.c % p.groups != 0) return false;
  const int64_t kg = p.k / p.groups;
  const int64_t chunks = (kg + c.channels_per_thread - 1) / c.channels_per_thread;
  return DirectSharedBytes(p, c.channels_per_thread) <= kDirectMaxSharedBytes && p.groups * chunks <= 65535 &&
         FitsIndexing(p);
}

gpuError_t LaunchDirect(const Problem& p, const DirectConfig& c, gpuStream_t stream) {
  if (p.type != ElementType::kF32 || p.kind == Kind::kBackward || !DirectFits(p, c)) return gpuErrorInvalidValue;
  const int64_t pixels = p.n * p.p * p.q;
  if (pixels == 0 || p.k == 0) return gpuSuccess;
  const int cpt = c.channels_per_thread;
  DirectGeometry g;
  g.pq = FastDivmod(static_cast<uint32_t>(p.p * p.q));
  g.q = FastDivmod(static_cast<uint32_t>(p.q));
  g.pixels = static_cast<uint32_t>(pixels);
  g.chunks = static_cast<int>((p.k / p.groups + cpt - 1) / cpt);
  g.taps_c = static_cast<int>(p.reduction_length());
  g.vector_c = VectorChannels(p);
  const dim3 grid(static_cast<unsigned>((pixels + c.block - 1) / c.block), static_cast<unsigned>(p.groups * g.chunks));
  const size_t shared = DirectSharedBytes(p, cpt);
  switch (cpt) {
    case 1:
      return Launch<1>(p, g, grid, c.block, shared, stream);
    case 2:
      return Launch<2>(p, g, grid, c.block, shared, stream);
    case 4:
      return Launch<4>(p, g, grid, c.block, shared, stream);
    case 8:
      return Launch<8>(p, g, grid, c.block, shared, stream);
    default:
      return Launch<16>(p, g, grid, c.block, shared, stream);
  }
}

}  // namespace opsched::conv2d::gpu_kernels
