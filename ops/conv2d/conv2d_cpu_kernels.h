// Direct convolution loops on the CPU, written once for every element type and
// accumulator: conv2d_cpu_direct runs them in f32, the float64 reference
// (conv2d_reference.cc) in double. Each output element is one sequential sum in a
// fixed order, so results do not depend on the thread count.
#pragma once

#include <omp.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <vector>

#include "core/element.h"
#include "ops/conv2d/conv2d_params.h"

namespace opsched::conv2d::cpu {

// Float64 "storage" for the reference.
struct F64 {
  using Storage = double;
  static double Load(double v) { return v; }
  static double Store(double v) { return v; }
};

template <typename Acc>
Acc ActivateAcc(Activation act, Acc v) {
  switch (act) {
    case Activation::kRelu:
      return v > 0 ? v : (std::isnan(v) ? v : Acc(0));
    case Activation::kSigmoid:
      return Acc(1) / (Acc(1) + std::exp(-v));
    case Activation::kTanh:
      return std::tanh(v);
    default:
      return v;
  }
}

// With Abs, every loaded value is taken by magnitude and the activation is skipped:
// the result is the sum of |products| (plus |bias|) that bounds the rounding error.
template <bool Abs, typename Acc, typename E>
Acc Load(const typename E::Storage* base, int64_t offset) {
  const Acc v = static_cast<Acc>(E::Load(base[offset]));
  return Abs ? std::abs(v) : v;
}

inline int64_t Offset(const int64_t* strides, int64_t a, int64_t b, int64_t c, int64_t d) {
  return a * strides[0] + b * strides[1] + c * strides[2] + d * strides[3];
}

// y[n,k,p,q] (forward and bias + activation), parallel over (n, k).
template <typename E, typename Acc, bool Abs = false>
void Forward(const Problem& pr, int threads) {
  using S = typename E::Storage;
  const S* x = static_cast<const S*>(pr.x);
  const S* w = static_cast<const S*>(pr.wt);
  const S* b = static_cast<const S*>(pr.b);
  S* y = static_cast<S*>(pr.y);
  const int64_t cg = pr.channels_per_group(), kg = pr.filters_per_group();
#pragma omp parallel for collapse(2) schedule(static) num_threads(threads)
  for (int64_t n = 0; n < pr.n; ++n) {
    for (int64_t k = 0; k < pr.k; ++k) {
      const int64_t c0 = (k / kg) * cg;
      for (int64_t oh = 0; oh < pr.p; ++oh) {
        for (int64_t ow = 0; ow < pr.q; ++ow) {
          Acc acc = 0;
          for (int64_t c = 0; c < cg; ++c) {
            for (int64_t r = 0; r < pr.r; ++r) {
              const int64_t ih = oh * pr.stride_h - pr.pad_h + r * pr.dil_h;
              if (ih < 0 || ih >= pr.h) continue;
              for (int64_t s = 0; s < pr.s; ++s) {
                const int64_t iw = ow * pr.stride_w - pr.pad_w + s * pr.dil_w;
                if (iw < 0 || iw >= pr.w) continue;
                acc += Load<Abs, Acc, E>(x, Offset(pr.x_strides, n, c0 + c, ih, iw)) *
                       Load<Abs, Acc, E>(w, Offset(pr.w_strides, k, c, r, s));
              }
            }
          }
          if (pr.kind == Kind::kBiasActivation) {
            acc += Load<Abs, Acc, E>(b, k * pr.b_stride);
            if (!Abs) acc = ActivateAcc(pr.act, acc);
          }
          y[Offset(pr.y_strides, n, k, oh, ow)] = E::Store(acc);
        }
      }
    }
  }
}

// Calls f(r, s, oh, ow) for every filter tap (r, s) and output position (oh, ow) whose
// window reads input position (ih, iw): the gather form of the backward data pass.
template <typename F>
inline void ForTapsReading(const Problem& pr, int64_t ih, int64_t iw, F&& f) {
  for (int64_t r = 0; r < pr.r; ++r) {
    const int64_t th = ih + pr.pad_h - r * pr.dil_h;
    if (th < 0 || th % pr.stride_h != 0 || th / pr.stride_h >= pr.p) continue;
    for (int64_t s = 0; s < pr.s; ++s) {
      const int64_t tw = iw + pr.pad_w - s * pr.dil_w;
      if (tw < 0 || tw % pr.stride_w != 0 || tw / pr.stride_w >= pr.q) continue;
      f(r, s, th / pr.stride_h, tw / pr.stride_w);
    }
  }
}

// dx[n,c,h,w] = sum over the filters of c's group and the taps that read (h, w) of
// dy * w; parallel over (n, c).
template <typename E, typename Acc, bool Abs = false>
void BackwardData(const Problem& pr, int threads) {
  using S = typename E::Storage;
  const S* w = static_cast<const S*>(pr.wt);
  const S* dy = static_cast<const S*>(pr.y);
  S* dx = static_cast<S*>(pr.dx);
  const int64_t cg = pr.channels_per_group(), kg = pr.filters_per_group();
#pragma omp parallel for collapse(2) schedule(static) num_threads(threads)
  for (int64_t n = 0; n < pr.n; ++n) {
    for (int64_t c = 0; c < pr.c; ++c) {
      const int64_t g = c / cg, cc = c - g * cg;
      for (int64_t ih = 0; ih < pr.h; ++ih) {
        for (int64_t iw = 0; iw < pr.w; ++iw) {
          Acc acc = 0;
          for (int64_t kk = 0; kk < kg; ++kk) {
            const int64_t k = g * kg + kk;
            ForTapsReading(pr, ih, iw, [&](int64_t r, int64_t s, int64_t oh, int64_t ow) {
              acc += Load<Abs, Acc, E>(dy, Offset(pr.y_strides, n, k, oh, ow)) *
                     Load<Abs, Acc, E>(w, Offset(pr.w_strides, k, cc, r, s));
            });
          }
          dx[Offset(pr.dx_strides, n, c, ih, iw)] = E::Store(acc);
        }
      }
    }
  }
}

// dw[k,c',r,s] = sum over images and output positions of dy * x; parallel over (k, c').
template <typename E, typename Acc, bool Abs = false>
void BackwardFilter(const Problem& pr, int threads) {
  using S = typename E::Storage;
  const S* x = static_cast<const S*>(pr.x);
  const S* dy = static_cast<const S*>(pr.y);
  S* dw = static_cast<S*>(pr.dw);
  const int64_t cg = pr.channels_per_group(), kg = pr.filters_per_group();
#pragma omp parallel for collapse(2) schedule(static) num_threads(threads)
  for (int64_t k = 0; k < pr.k; ++k) {
    for (int64_t cc = 0; cc < cg; ++cc) {
      const int64_t c = (k / kg) * cg + cc;
      for (int64_t r = 0; r < pr.r; ++r) {
        for (int64_t s = 0; s < pr.s; ++s) {
          Acc acc = 0;
          for (int64_t n = 0; n < pr.n; ++n) {
            for (int64_t oh = 0; oh < pr.p; ++oh) {
              const int64_t ih = oh * pr.stride_h - pr.pad_h + r * pr.dil_h;
              if (ih < 0 || ih >= pr.h) continue;
              for (int64_t ow = 0; ow < pr.q; ++ow) {
                const int64_t iw = ow * pr.stride_w - pr.pad_w + s * pr.dil_w;
                if (iw < 0 || iw >= pr.w) continue;
                acc += Load<Abs, Acc, E>(dy, Offset(pr.y_strides, n, k, oh, ow)) *
                       Load<Abs, Acc, E>(x, Offset(pr.x_strides, n, c, ih, iw));
              }
            }
          }
          dw[Offset(pr.dw_strides, k, cc, r, s)] = E::Store(acc);
        }
      }
    }
  }
}

// Calls f.template operator()<E>() with E the element tag of the problem's type.
template <typename F>
void VisitType(ElementType type, F&& f) {
  switch (type) {
    case ElementType::kF16:
      f.template operator()<F16>();
      break;
    case ElementType::kBF16:
      f.template operator()<BF16>();
      break;
    default:
      f.template operator()<F32>();
  }
}

// Every output of the problem's kind.
template <typename E, typename Acc, bool Abs = false>
void Run(const Problem& pr, int threads) {
  if (pr.kind == Kind::kBackward) {
    BackwardData<E, Acc, Abs>(pr, threads);
    BackwardFilter<E, Acc, Abs>(pr, threads);
  } else {
    Forward<E, Acc, Abs>(pr, threads);
  }
}

}  // namespace opsched::conv2d::cpu
