// im2col + GEMM on the CPU, for the three ops of the family. Per image, the input
// patches are unfolded into col[(c, r, s)][(p, q)] (f32, in the workspace); per group
// the forward pass is then Y_g = W_g x col_g, the filter gradient accumulates
// dY_g x col_g^T over images, and the data gradient is dcol_g = W_g^T x dY_g folded
// back by a gather (each dx element sums its own taps: deterministic, no races).
// The GEMM loops run over contiguous rows so the compiler vectorises them.
#include <algorithm>
#include <cstring>

#include "core/format.h"
#include "ops/conv2d/conv2d_cpu_kernels.h"
#include "ops/conv2d/conv2d_def.h"
#include "ops/conv2d/conv2d_register.h"
#include "registry/cpu_knobs.h"
#include "registry/registry.h"

namespace opsched::conv2d {
namespace {

using cpu::Offset;

int64_t ColRows(const Problem& p) { return p.c * p.r * p.s; }
int64_t Pixels(const Problem& p) { return p.p * p.q; }

// Unfolds image n: col[(c*R + r)*S + s][oh*Q + ow] = x[n, c, ih, iw] or 0 outside.
template <typename E>
void Im2col(const Problem& p, int64_t n, float* col, int threads) {
  const auto* x = static_cast<const typename E::Storage*>(p.x);
#pragma omp parallel for schedule(static) num_threads(threads)
  for (int64_t row = 0; row < ColRows(p); ++row) {
    const int64_t c = row / (p.r * p.s), r = row / p.s % p.r, s = row % p.s;
    float* out = col + row * Pixels(p);
    for (int64_t oh = 0; oh < p.p; ++oh) {
      const int64_t ih = oh * p.stride_h - p.pad_h + r * p.dil_h;
      for (int64_t ow = 0; ow < p.q; ++ow) {
        const int64_t iw = ow * p.stride_w - p.pad_w + s * p.dil_w;
        const bool inside = ih >= 0 && ih < p.h && iw >= 0 && iw < p.w;
        out[oh * p.q + ow] = inside ? E::Load(x[Offset(p.x_strides, n, c, ih, iw)]) : 0.0f;
      }
    }
  }
}

// dY of image n as f32 rows: dy[k][oh*Q + ow].
template <typename E>
void PackOutputGradient(const Problem& p, int64_t n, float* dy, int threads) {
  const auto* src = static_cast<const typename E::Storage*>(p.y);
#pragma omp parallel for schedule(static) num_threads(threads)
  for (int64_t k = 0; k < p.k; ++k) {
    for (int64_t oh = 0; oh < p.p; ++oh) {
      for (int64_t ow = 0; ow < p.q; ++ow) {
        dy[k * Pixels(p) + oh * p.q + ow] = E::Load(src[Offset(p.y_strides, n, k, oh, ow)]);
      }
    }
  }
}

// W as f32 rows: w[k][(c'*R + r)*S + s].
template <typename E>
void PackFilters(const Problem& p, float* w) {
  const auto* src = static_cast<const typename E::Storage*>(p.wt);
  const int64_t cg = p.channels_per_group();
  for (int64_t k = 0; k < p.k; ++k) {
    for (int64_t c = 0; c < cg; ++c) {
      for (int64_t r = 0; r < p.r; ++r) {
        for (int64_t s = 0; s < p.s; ++s) {
          w[((k * cg + c) * p.r + r) * p.s + s] = E::Load(src[Offset(p.w_strides, k, c, r, s)]);
        }
      }
    }
  }
}

// Workspace layout, in floats: packed filters, then per-op buffers.
struct Layout {
  int64_t filters = 0, col = 0, dy = 0, dcol = 0, dw = 0, rows = 0;
  int64_t total() const { return filters + col + dy + dcol + dw + rows; }
};

Layout WorkspaceLayout(const Problem& p, int threads) {
  Layout l;
  l.filters = p.k * p.reduction_length();
  l.col = ColRows(p) * Pixels(p);
  if (p.kind == Kind::kBackward) {
    l.dy = p.k * Pixels(p);
    l.dcol = l.col;
    l.dw = l.filters;
  } else {
    l.rows = static_cast<int64_t>(threads) * Pixels(p);
  }
  return l;
}

size_t WorkspaceBytesOf(const Problem& p, int threads) {
  return static_cast<size_t>(WorkspaceLayout(p, threads).total()) * sizeof(float);
}

template <typename E>
void Forward(const Problem& p, int threads, float* ws) {
  const Layout l = WorkspaceLayout(p, threads);
  float* w = ws;
  float* col = w + l.filters;
  float* rows = col + l.col;
  PackFilters<E>(p, w);
  const auto* b = static_cast<const typename E::Storage*>(p.b);
  auto* y = static_cast<typename E::Storage*>(p.y);
  const int64_t cg = p.channels_per_group(), kg = p.filters_per_group(), crs = p.reduction_length();
  const int64_t pixels = Pixels(p);
  for (int64_t n = 0; n < p.n; ++n) {
    Im2col<E>(p, n, col, threads);
#pragma omp parallel for schedule(static) num_threads(threads)
    for (int64_t k = 0; k < p.k; ++k) {
      float* acc = rows + static_cast<int64_t>(omp_get_thread_num()) * pixels;
      std::fill(acc, acc + pixels, 0.0f);
      const float* wk = w + k * crs;
      const float* colg = col + (k / kg) * cg * p.r * p.s * pixels;
      for (int64_t j = 0; j < crs; ++j) {
        const float a = wk[j];
        const float* src = colg + j * pixels;
        for (int64_t i = 0; i < pixels; ++i) acc[i] += a * src[i];
      }
      const float bias = p.kind == Kind::kBiasActivation ? E::Load(b[k * p.b_stride]) : 0.0f;
      for (int64_t oh = 0; oh < p.p; ++oh) {
        for (int64_t ow = 0; ow < p.q; ++ow) {
          float v = acc[oh * p.q + ow];
          if (p.kind == Kind::kBiasActivation) v = cpu::ActivateAcc(p.act, v + bias);
          y[Offset(p.y_strides, n, k, oh, ow)] = E::Store(v);
        }
      }
    }
  }
}

template <typename E>
void Backward(const Problem& p, int threads, float* ws) {
  const Layout l = WorkspaceLayout(p, threads);
  float* w = ws;
  float* col = w + l.filters;
  float* dy = col + l.col;
  float* dcol = dy + l.dy;
  float* dw = dcol + l.dcol;
  PackFilters<E>(p, w);
  std::fill(dw, dw + l.dw, 0.0f);
  const int64_t cg = p.channels_per_group(), kg = p.filters_per_group(), crs = p.reduction_length();
  const int64_t pixels = Pixels(p);
  auto* dx = static_cast<typename E::Storage*>(p.dx);
  for (int64_t n = 0; n < p.n; ++n) {
    Im2col<E>(p, n, col, threads);
    PackOutputGradient<E>(p, n, dy, threads);
    // dW_g += dY_g x col_g^T: one row of dw per filter.
#pragma omp parallel for schedule(static) num_threads(threads)
    for (int64_t k = 0; k < p.k; ++k) {
      const float* colg = col + (k / kg) * cg * p.r * p.s * pixels;
      const float* dyk = dy + k * pixels;
      for (int64_t j = 0; j < crs; ++j) {
        const float* src = colg + j * pixels;
        float sum = 0.0f;
        for (int64_t i = 0; i < pixels; ++i) sum += dyk[i] * src[i];
        dw[k * crs + j] += sum;
      }
    }
    // dcol_g = W_g^T x dY_g: one row of dcol per (c, r, s).
#pragma omp parallel for schedule(static) num_threads(threads)
    for (int64_t row = 0; row < ColRows(p); ++row) {
      const int64_t c = row / (p.r * p.s), g = c / cg, j = row - g * cg * p.r * p.s;
      float* out = dcol + row * pixels;
      std::fill(out, out + pixels, 0.0f);
      for (int64_t kk = 0; kk < kg; ++kk) {
        const int64_t k = g * kg + kk;
        const float a = w[k * crs + j];
        const float* dyk = dy + k * pixels;
        for (int64_t i = 0; i < pixels; ++i) out[i] += a * dyk[i];
      }
    }
    // col2im as a gather: dx[n, c, ih, iw] sums the dcol entries of the taps reading it.
#pragma omp parallel for schedule(static) num_threads(threads)
    for (int64_t c = 0; c < p.c; ++c) {
      for (int64_t ih = 0; ih < p.h; ++ih) {
        for (int64_t iw = 0; iw < p.w; ++iw) {
          float sum = 0.0f;
          cpu::ForTapsReading(p, ih, iw, [&](int64_t r, int64_t s, int64_t oh, int64_t ow) {
            sum += dcol[((c * p.r + r) * p.s + s) * pixels + oh * p.q + ow];
          });
          dx[Offset(p.dx_strides, n, c, ih, iw)] = E::Store(sum);
        }
      }
    }
  }
  auto* out = static_cast<typename E::Storage*>(p.dw);
  for (int64_t k = 0; k < p.k; ++k) {
    for (int64_t c = 0; c < cg; ++c) {
      for (int64_t r = 0; r < p.r; ++r) {
        for (int64_t s = 0; s < p.s; ++s) {
          out[Offset(p.dw_strides, k, c, r, s)] = E::Store(dw[k * crs + (c * p.r + r) * p.s + s]);
        }
      }
    }
  }
}

template <Kind K>
class Conv2dCpuIm2colGemm : public Implementation {
 public:
  std::string_view op() const override { return OpName(K); }
  std::string_view name() const override {
    return K == Kind::kForward            ? "conv2d_cpu_im2col_gemm"
           : K == Kind::kBiasActivation ? "conv2d_bias_act_cpu_im2col_gemm"
                                          : "conv2d_backward_cpu_im2col_gemm";
  }
  DeviceKind device_kind() const override { return DeviceKind::kCpu; }
  ImplementationTraits traits() const override { return {.deterministic = true}; }
  Status Applicable(const Workload& w, const Target&) const override {
    const Problem p = MakeProblem(w);
    const double bytes = 4.0 * static_cast<double>(WorkspaceLayout(p, 64).total());
    if (bytes > 4e9) {
      return absl::InvalidArgumentError(fmt::format("needs {:.1f} GB of unfolded patches per image", bytes / 1e9));
    }
    return absl::OkStatus();
  }
  ConfigSpace Space(const Workload&, const Target& target) const override { return CpuThreadKnobs(target).Space(); }
  // A workspace per thread. No target here: a config that leaves threads out counts one
  // (Prepare sizes its own with the target's default); 0 for a config that does not
  // parse (Prepare reports it).
  size_t WorkspaceBytes(const Workload& w, const Config& c) const override {
    StatusOr<CpuKnobs> knobs = CpuThreadKnobs(Target{}).Parse(c);
    return knobs.ok() ? WorkspaceBytesOf(MakeProblem(w), knobs->threads) : 0;
  }
  Status Run(const RunArgs& a) const override { return PrepareAndRun(*this, a); }
  StatusOr<std::unique_ptr<Prepared>> Prepare(const Workload& w, const Config& c, const Target& target) const override {
    OPSCHED_ASSIGN_OR_RETURN(const CpuKnobs knobs, CpuThreadKnobs(target).Parse(c));
    const int threads = knobs.threads;
    const Problem base = MakeProblem(w);
    const size_t needed = WorkspaceBytesOf(base, threads);
    return MakePrepared(needed, [base, threads, needed, name = name()](const PreparedArgs& a) {
      if (a.workspace_bytes < needed) {
        return absl::InternalError(fmt::format("{} needs {} bytes of workspace, {} given", name, needed,
                                               a.workspace_bytes));
      }
      const Problem p = WithTensors(base, a.tensors);
      float* ws = static_cast<float*>(a.workspace);
      cpu::VisitType(p.type, [&]<typename E>() {
        if (p.kind == Kind::kBackward) {
          Backward<E>(p, threads, ws);
        } else {
          Forward<E>(p, threads, ws);
        }
      });
      return absl::OkStatus();
    });
  }
};

using Conv2dCpuIm2colGemmForward = Conv2dCpuIm2colGemm<Kind::kForward>;
using Conv2dCpuIm2colGemmBiasActivation = Conv2dCpuIm2colGemm<Kind::kBiasActivation>;
using Conv2dCpuIm2colGemmBackward = Conv2dCpuIm2colGemm<Kind::kBackward>;

}  // namespace

Status RegisterCpuGemm(Registry& registry) {
  OPSCHED_RETURN_IF_ERROR(registry.AddImplementation(std::make_unique<Conv2dCpuIm2colGemmForward>()));
  OPSCHED_RETURN_IF_ERROR(registry.AddImplementation(std::make_unique<Conv2dCpuIm2colGemmBiasActivation>()));
  OPSCHED_RETURN_IF_ERROR(registry.AddImplementation(std::make_unique<Conv2dCpuIm2colGemmBackward>()));
  return absl::OkStatus();
}

}  // namespace opsched::conv2d
