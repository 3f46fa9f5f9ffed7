// The conv2d family's float64 GPU reference: see conv2d_cuda_reference.h.
#include <algorithm>

#include "core/gpu/verify_device.cuh"
#include "ops/conv2d/conv2d_cuda_reference.h"

namespace opsched::conv2d::gpu_reference {
namespace {

constexpr int kBlock = 256;

int Blocks(int64_t n) {
  return static_cast<int>(std::clamp<int64_t>((n + kBlock - 1) / kBlock, 1, int64_t(1) << 16));
}

__device__ double Load(const Problem& p, const void* base, int64_t offset) {
  switch (p.type) {
    case ElementType::kF16:
      return HalfToFloat(static_cast<const uint16_t*>(base)[offset]);
    case ElementType::kBF16:
      return Bf16ToFloat(static_cast<const uint16_t*>(base)[offset]);
    default:
      return static_cast<const float*>(base)[offset];
  }
}

__device__ int64_t Offset(const int64_t* s, int64_t a, int64_t b, int64_t c, int64_t d) {
  return a * s[0] + b * s[1] + c * s[2] + d * s[3];
}

// Logical (a, b, c, d) — (n, c, h, w) or (k, c', r, s) — of the row-major index e of a
// tensor of logical sizes A..D stored in `layout` (nhwc keeps b innermost).
__device__ void Decompose(int64_t e, Layout layout, int64_t A, int64_t B, int64_t C, int64_t D, int64_t* a,
                          int64_t* b, int64_t* c, int64_t* d) {
  if (layout == Layout::kNhwc) {
    *b = e % B;
    e /= B;
    *d = e % D;
    e /= D;
    *c = e % C;
    *a = e / C;
  } else {
    *d = e % D;
    e /= D;
    *c = e % C;
    e /= C;
    *b = e % B;
    *a = e / B;
  }
}

__device__ double Activate(Activation act, double v) {
  switch (act) {
    case Activation::kRelu:
      return v > 0 ? v : (gpu::RefIsNan(v) ? v : 0.0);
    case Activation::kSigmoid:
      return 1.0 / (1.0 + exp(-v));
    case Activation::kTanh:
      return tanh(v);
    default:
      return v;
  }
}

#define FOR_EACH(e, n) \
  for (int64_t e = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; e < (n); e += int64_t(gridDim.x) * blockDim.x)

__global__ void ForwardKernel(Problem pr, double* ref, double* magnitude) {
  const int64_t cg = pr.c / pr.groups, kg = pr.k / pr.groups;
  FOR_EACH(e, pr.n * pr.k * pr.p * pr.q) {
    int64_t n, k, oh, ow;
    Decompose(e, pr.layout, pr.n, pr.k, pr.p, pr.q, &n, &k, &oh, &ow);
    const int64_t c0 = (k / kg) * cg;
    double acc = 0, mag = 0;
    for (int64_t c = 0; c < cg; ++c) {
      for (int64_t r = 0; r < pr.r; ++r) {
        const int64_t ih = oh * pr.stride_h - pr.pad_h + r * pr.dil_h;
        if (ih < 0 || ih >= pr.h) continue;
        for (int64_t s = 0; s < pr.s; ++s) {
          const int64_t iw = ow * pr.stride_w - pr.pad_w + s * pr.dil_w;
          if (iw < 0 || iw >= pr.w) continue;
          const double prod = Load(pr, pr.x, Offset(pr.x_strides, n, c0 + c, ih, iw)) *
                              Load(pr, pr.wt, Offset(pr.w_strides, k, c, r, s));
          acc += prod;
          mag += fabs(prod);
        }
      }
    }
    if (pr.kind == Kind::kBiasActivation) {
      const double b = Load(pr, pr.b, k * pr.b_stride);
      acc = Activate(pr.act, acc + b);
      mag += fabs(b);
    }
    ref[e] = acc;
    magnitude[e] = mag;
  }
}

__global__ void BackwardDataKernel(Problem pr, double* ref, double* magnitude) {
  const int64_t cg = pr.c / pr.groups, kg = pr.k / pr.groups;
  FOR_EACH(e, pr.n * pr.c * pr.h * pr.w) {
    int64_t n, c, ih, iw;
    Decompose(e, pr.layout, pr.n, pr.c, pr.h, pr.w, &n, &c, &ih, &iw);
    const int64_t g = c / cg, cc = c - g * cg;
    double acc = 0, mag = 0;
    for (int64_t kk = 0; kk < kg; ++kk) {
      const int64_t k = g * kg + kk;
      for (int64_t r = 0; r < pr.r; ++r) {
        const int64_t th = ih + pr.pad_h - r * pr.dil_h;
        if (th < 0 || th % pr.stride_h != 0 || th / pr.stride_h >= pr.p) continue;
        for (int64_t s = 0; s < pr.s; ++s) {
          const int64_t tw = iw + pr.pad_w - s * pr.dil_w;
          if (tw < 0 || tw % pr.stride_w != 0 || tw / pr.stride_w >= pr.q) continue;
          const double prod = Load(pr, pr.y, Offset(pr.y_strides, n, k, th / pr.stride_h, tw / pr.stride_w)) *
                              Load(pr, pr.wt, Offset(pr.w_strides, k, cc, r, s));
          acc += prod;
          mag += fabs(prod);
        }
      }
    }
    ref[e] = acc;
    magnitude[e] = mag;
  }
}

__global__ void BackwardFilterKernel(Problem pr, double* ref, double* magnitude) {
  const int64_t cg = pr.c / pr.groups, kg = pr.k / pr.groups;
  FOR_EACH(e, pr.k * cg * pr.r * pr.s) {
    int64_t k, cc, r, s;
    Decompose(e, pr.layout, pr.k, cg, pr.r, pr.s, &k, &cc, &r, &s);
    const int64_t c = (k / kg) * cg + cc;
    double acc = 0, mag = 0;
    for (int64_t n = 0; n < pr.n; ++n) {
      for (int64_t oh = 0; oh < pr.p; ++oh) {
        const int64_t ih = oh * pr.stride_h - pr.pad_h + r * pr.dil_h;
        if (ih < 0 || ih >= pr.h) continue;
        for (int64_t ow = 0; ow < pr.q; ++ow) {
          const int64_t iw = ow * pr.stride_w - pr.pad_w + s * pr.dil_w;
          if (iw < 0 || iw >= pr.w) continue;
          const double prod = Load(pr, pr.y, Offset(pr.y_strides, n, k, oh, ow)) *
                              Load(pr, pr.x, Offset(pr.x_strides, n, c, ih, iw));
          acc += prod;
          mag += fabs(prod);
        }
      }
    }
    ref[e] = acc;
    magnitude[e] = mag;
  }
}

}  // namespace

gpuError_t LaunchReference(const Problem& pr, double* const ref[2], double* const magnitude[2], gpuStream_t stream) {
  if (pr.kind == Kind::kBackward) {
    const int64_t dx = pr.n * pr.c * pr.h * pr.w;
    const int64_t dw = pr.k * pr.channels_per_group() * pr.r * pr.s;
    if (dx > 0) BackwardDataKernel<<<Blocks(dx), kBlock, 0, stream>>>(pr, ref[0], magnitude[0]);
    if (dw > 0) BackwardFilterKernel<<<Blocks(dw), kBlock, 0, stream>>>(pr, ref[1], magnitude[1]);
  } else {
    const int64_t y = pr.n * pr.k * pr.p * pr.q;
    if (y > 0) ForwardKernel<<<Blocks(y), kBlock, 0, stream>>>(pr, ref[0], magnitude[0]);
  }
  return gpuGetLastError();
}

}  // namespace opsched::conv2d::gpu_reference
