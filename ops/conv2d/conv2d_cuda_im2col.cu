// The pieces around cuBLAS in the GEMM formulations: im2col (forward, backward filter),
// col2im (backward data), the bias + activation epilogue and strided packing of GEMM
// operands. Every kernel writes its output in memory order (consecutive threads,
// consecutive addresses) and gathers its inputs, so none needs atomics.
#include <algorithm>
#include <cstdint>

#include "core/gpu/fast_divmod.h"
#include "ops/conv2d/conv2d_cuda.h"
#include "ops/conv2d/conv2d_math.h"

namespace opsched::conv2d::gpu_kernels {
namespace {

// Blocks of a flat launch over `total` items; grid-stride loops cover the rest.
unsigned GridFor(int64_t total, int block) {
  const int64_t blocks = (total + block - 1) / block;
  return static_cast<unsigned>(std::min<int64_t>(std::max<int64_t>(blocks, 1), 65535 * 16));
}

bool ValidBlock(int block) { return block >= 32 && block <= 1024 && block % 32 == 0; }

// Splits a column index into (c, r, s) for nchw rows or (g, r, s, c') for nhwc columns.
struct ColumnSplit {
  FastDivmod rs;  // c-major index -> (c, r*S + s)       [nchw]
  FastDivmod s;   // r*S + s -> (r, s)
  FastDivmod cg;  // (r*S + s)*C/G + c' -> (tap, c')    [nhwc]
  FastDivmod crsg;  // column -> (g, rest)              [nhwc]
};

ColumnSplit MakeColumnSplit(const Problem& p) {
  ColumnSplit s;
  s.rs = FastDivmod(static_cast<uint32_t>(p.r * p.s));
  s.s = FastDivmod(static_cast<uint32_t>(p.s));
  s.cg = FastDivmod(static_cast<uint32_t>(p.c / p.groups));
  s.crsg = FastDivmod(static_cast<uint32_t>(p.reduction_length()));
  return s;
}

// (c, r, s) of column/row index j in the layout's order.
__device__ __forceinline__ void SplitColumn(const Problem& p, const ColumnSplit& cs, uint32_t j, uint32_t* c,
                                            uint32_t* r, uint32_t* s) {
  uint32_t tap;
  if (p.layout == Layout::kNchw) {
    cs.rs.DivMod(j, c, &tap);
  } else {
    uint32_t g, rest, cprime;
    cs.crsg.DivMod(j, &g, &rest);
    cs.cg.DivMod(rest, &tap, &cprime);
    *c = g * cs.cg.divisor + cprime;
  }
  cs.s.DivMod(tap, r, s);
}

struct Im2colGeometry {
  FastDivmod pq;    // P*Q
  FastDivmod q;     // Q
  FastDivmod crs;   // C*R*S
  ColumnSplit cols;
  uint32_t total;   // images * C*R*S * P*Q
  int64_t first_image;
};

__global__ void Im2colKernel(Problem p, Im2colGeometry g, float* __restrict__ col) {
  const float* __restrict__ x = static_cast<const float*>(p.x);
  for (uint32_t e = blockIdx.x * blockDim.x + threadIdx.x; e < g.total; e += gridDim.x * blockDim.x) {
    uint32_t image, j, pq;
    if (p.layout == Layout::kNchw) {  // e = (image*CRS + j)*PQ + pq
      uint32_t row;
      g.pq.DivMod(e, &row, &pq);
      g.crs.DivMod(row, &image, &j);
    } else {  // e = (image*PQ + pq)*CRS + j
      uint32_t pixel;
      g.crs.DivMod(e, &pixel, &j);
      g.pq.DivMod(pixel, &image, &pq);
    }
    uint32_t c, r, s, op, oq;
    SplitColumn(p, g.cols, j, &c, &r, &s);
    g.q.DivMod(pq, &op, &oq);
    const int64_t h = int64_t(op) * p.stride_h - p.pad_h + int64_t(r) * p.dil_h;
    const int64_t w = int64_t(oq) * p.stride_w - p.pad_w + int64_t(s) * p.dil_w;
    float v = 0.0f;
    if (h >= 0 && h < p.h && w >= 0 && w < p.w) {
      v = x[(g.first_image + image) * p.x_strides[0] + c * p.x_strides[1] + h * p.x_strides[2] +
            w * p.x_strides[3]];
    }
    col[e] = v;
  }
}

struct Col2imGeometry {
  FastDivmod chw;   // position within an image in dx's memory order
  FastDivmod inner; // nchw: H*W; nhwc: W*C
  FastDivmod last;  // nchw: W;   nhwc: C
  uint32_t total;   // images * C*H*W
  int64_t first_image;
  int64_t crs;
};

// One input position's sum over the output positions and taps that read it, in a fixed
// (r, s) order. Sizes fit in 32 bits (FitsIndexing), so the tap arithmetic uses int.
__device__ float GatherTaps(const Problem& p, const Col2imGeometry& g, const float* __restrict__ col,
                            uint32_t image, int c, int h, int w) {
  const int cg = static_cast<int>(p.c / p.groups);
  const int group = c / cg;
  const int R = static_cast<int>(p.r), S = static_cast<int>(p.s);
  const int P = static_cast<int>(p.p), Q = static_cast<int>(p.q);
  const int sh = static_cast<int>(p.stride_h), sw = static_cast<int>(p.stride_w);
  const int64_t image_base = int64_t(image) * g.crs * P * Q;
  float sum = 0.0f;
  for (int r = 0; r < R; ++r) {
    const int hp = h + static_cast<int>(p.pad_h) - r * static_cast<int>(p.dil_h);
    if (hp < 0 || hp % sh != 0 || hp / sh >= P) continue;
    const int op = hp / sh;
    for (int s = 0; s < S; ++s) {
      const int wp = w + static_cast<int>(p.pad_w) - s * static_cast<int>(p.dil_w);
      if (wp < 0 || wp % sw != 0 || wp / sw >= Q) continue;
      const int oq = wp / sw;
      int64_t index;
      if (p.layout == Layout::kNchw) {  // [image][(c, r, s)][(p, q)]
        index = image_base + (int64_t(c * R + r) * S + s) * P * Q + op * Q + oq;
      } else {  // [image][(p, q)][(g, r, s, c')]
        const int64_t column = int64_t(group) * R * S * cg + (r * S + s) * cg + (c - group * cg);
        index = image_base + (int64_t(op) * Q + oq) * g.crs + column;
      }
      sum += col[index];
    }
  }
  return sum;
}

__global__ void Col2imKernel(Problem p, Col2imGeometry g, const float* __restrict__ col) {
  float* __restrict__ dx = static_cast<float*>(p.dx);
  for (uint32_t e = blockIdx.x * blockDim.x + threadIdx.x; e < g.total; e += gridDim.x * blockDim.x) {
    uint32_t image, rest, a, b, last;
    g.chw.DivMod(e, &image, &rest);
    g.inner.DivMod(rest, &a, &b);
    g.last.DivMod(b, &b, &last);
    // nchw: (c, h, w) = (a, b, last); nhwc: (h, w, c) = (a, b, last).
    const bool nchw = p.layout == Layout::kNchw;
    const int c = static_cast<int>(nchw ? a : last);
    const int h = static_cast<int>(nchw ? b : a);
    const int w = static_cast<int>(nchw ? last : b);
    const float v = GatherTaps(p, g, col, image, c, h, w);
    dx[(g.first_image + image) * p.dx_strides[0] + c * p.dx_strides[1] + h * p.dx_strides[2] +
       w * p.dx_strides[3]] = v;
  }
}

struct BiasGeometry {
  FastDivmod channel_run;  // elements sharing a channel index in a row: nchw P*Q, nhwc 1
  FastDivmod channels;     // K
  uint32_t total;          // N*K*P*Q, in units of V elements
};

template <int V>
__global__ void BiasActivationKernel(Problem p, BiasGeometry g) {
  float* __restrict__ y = static_cast<float*>(p.y);
  const float* __restrict__ b = static_cast<const float*>(p.b);
  for (uint32_t i = blockIdx.x * blockDim.x + threadIdx.x; i < g.total; i += gridDim.x * blockDim.x) {
    const uint32_t e = i * V;
    float v[V];
    if constexpr (V == 4) {
      const float4 t = reinterpret_cast<const float4*>(y)[i];
      v[0] = t.x, v[1] = t.y, v[2] = t.z, v[3] = t.w;
    } else {
      v[0] = y[e];
    }
    // nchw: the V elements share one channel (P*Q % V == 0); nhwc: consecutive channels.
    uint32_t row, k;
    g.channels.DivMod(g.channel_run.Div(e), &row, &k);
    const bool per_element = p.layout == Layout::kNhwc;
#pragma unroll
    for (int j = 0; j < V; ++j) {
      const uint32_t kj = per_element ? k + j : k;
      v[j] = Activate(p.act, v[j] + b[int64_t(kj) * p.b_stride]);
    }
    if constexpr (V == 4) {
      reinterpret_cast<float4*>(y)[i] = make_float4(v[0], v[1], v[2], v[3]);
    } else {
      y[e] = v[0];
    }
  }
}

struct PackGeometry {
  FastDivmod dims[4];  // in dst memory order, outermost first
  int64_t src_strides[4];
  int64_t dst_strides[4];
  uint32_t total;
};

__global__ void PackKernel(const float* __restrict__ src, float* __restrict__ dst, PackGeometry g) {
  for (uint32_t e = blockIdx.x * blockDim.x + threadIdx.x; e < g.total; e += gridDim.x * blockDim.x) {
    uint32_t rest = e;
    int64_t from = 0, to = 0;
#pragma unroll
    for (int d = 3; d >= 0; --d) {
      uint32_t index;
      g.dims[d].DivMod(rest, &rest, &index);
      from += int64_t(index) * g.src_strides[d];
      to += int64_t(index) * g.dst_strides[d];
    }
    dst[to] = src[from];
  }
}

}  // namespace

bool FitsIndexing(const Problem& p) {
  const int64_t extents[] = {p.n * p.p * p.q, p.n * p.c * p.h * p.w, p.n * p.k * p.p * p.q,
                             p.k * p.reduction_length()};
  for (int64_t e : extents) {
    if (e > kMaxExtent) return false;
  }
  return true;
}

int64_t ColumnElements(const Problem& p, int64_t images) { return images * p.c * p.r * p.s * p.p * p.q; }

gpuError_t LaunchIm2col(const Problem& p, int64_t first_image, int64_t images, float* col, int block,
                        gpuStream_t stream) {
  const int64_t total = ColumnElements(p, images);
  if (!ValidBlock(block) || total > kMaxExtent || p.groups < 1 || p.c % p.groups != 0) return gpuErrorInvalidValue;
  if (total == 0) return gpuSuccess;
  Im2colGeometry g;
  g.pq = FastDivmod(static_cast<uint32_t>(p.p * p.q));
  g.q = FastDivmod(static_cast<uint32_t>(p.q));
  g.crs = FastDivmod(static_cast<uint32_t>(p.c * p.r * p.s));
  g.cols = MakeColumnSplit(p);
  g.total = static_cast<uint32_t>(total);
  g.first_image = first_image;
  Im2colKernel<<<GridFor(total, block), block, 0, stream>>>(p, g, col);
  return gpuGetLastError();
}

gpuError_t LaunchCol2im(const Problem& p, int64_t first_image, int64_t images, const float* col, int block,
                        gpuStream_t stream) {
  const int64_t total = images * p.c * p.h * p.w;
  if (!ValidBlock(block) || total > kMaxExtent || p.groups < 1 || p.c % p.groups != 0) return gpuErrorInvalidValue;
  if (total == 0) return gpuSuccess;
  const bool nchw = p.layout == Layout::kNchw;
  Col2imGeometry g;
  g.chw = FastDivmod(static_cast<uint32_t>(p.c * p.h * p.w));
  g.inner = FastDivmod(static_cast<uint32_t>(nchw ? p.h * p.w : p.w * p.c));
  g.last = FastDivmod(static_cast<uint32_t>(nchw ? p.w : p.c));
  g.total = static_cast<uint32_t>(total);
  g.first_image = first_image;
  g.crs = p.c * p.r * p.s;
  Col2imKernel<<<GridFor(total, block), block, 0, stream>>>(p, g, col);
  return gpuGetLastError();
}

gpuError_t LaunchBiasActivation(const Problem& p, int block, gpuStream_t stream) {
  const int64_t total = p.n * p.k * p.p * p.q;
  if (!ValidBlock(block) || total > kMaxExtent || p.kind != Kind::kBiasActivation) return gpuErrorInvalidValue;
  if (total == 0) return gpuSuccess;
  const bool nchw = p.layout == Layout::kNchw;
  // Four elements at a time when they share a channel (nchw) or are four consecutive
  // channels of one pixel (nhwc), and y is 16-byte aligned.
  const int64_t run = nchw ? p.p * p.q : p.k;
  const bool vector = run % 4 == 0 && (reinterpret_cast<uintptr_t>(p.y) & 15) == 0;
  BiasGeometry g;
  g.channel_run = FastDivmod(static_cast<uint32_t>(nchw ? p.p * p.q : 1));
  g.channels = FastDivmod(static_cast<uint32_t>(p.k));
  if (vector) {
    g.total = static_cast<uint32_t>(total / 4);
    BiasActivationKernel<4><<<GridFor(g.total, block), block, 0, stream>>>(p, g);
  } else {
    g.total = static_cast<uint32_t>(total);
    BiasActivationKernel<1><<<GridFor(g.total, block), block, 0, stream>>>(p, g);
  }
  return gpuGetLastError();
}

gpuError_t LaunchPack(const float* src, float* dst, const StridedView& view, int block, gpuStream_t stream) {
  int64_t total = 1;
  for (int64_t d : view.dims) total *= d;
  if (!ValidBlock(block) || total > kMaxExtent) return gpuErrorInvalidValue;
  if (total == 0) return gpuSuccess;
  PackGeometry g;
  for (int i = 0; i < 4; ++i) {
    const int d = view.order[i];
    if (d < 0 || d > 3) return gpuErrorInvalidValue;
    g.dims[i] = FastDivmod(static_cast<uint32_t>(view.dims[d]));
    g.src_strides[i] = view.src_strides[d];
    g.dst_strides[i] = view.dst_strides[d];
  }
  g.total = static_cast<uint32_t>(total);
  PackKernel<<<GridFor(total, block), block, 0, stream>>>(src, dst, g);
  return gpuGetLastError();
}

}  // namespace opsched::conv2d::gpu_kernels
