// The conv2d family's op definitions: validation and canonical form, output shapes,
// input generation, the float64 reference (conv2d_reference.h) and the check against it.
#include "ops/conv2d/conv2d_def.h"

#include <algorithm>
#include <array>
#include <cmath>

#include "core/format.h"
#include "ops/conv2d/conv2d_reference.h"
#include "ops/conv2d/conv2d_register.h"
#include "registry/registry.h"

namespace opsched::conv2d {
namespace {

constexpr const char* kActivationNames[] = {"identity", "relu", "sigmoid", "tanh"};

// Where each logical dimension (n, c, h, w) sits in a layout's shape.
std::array<int, 4> LogicalOrder(Layout layout) {
  return layout == Layout::kNchw ? std::array<int, 4>{0, 1, 2, 3} : std::array<int, 4>{0, 3, 1, 2};
}

Layout LayoutOf(const Workload& w) { return *w.GetString("layout") == "nhwc" ? Layout::kNhwc : Layout::kNchw; }

// A layout's shape of logical (a, b, c, d) = (n, c, h, w) or, for filters, (k, c, r, s).
std::array<int64_t, 4> Shape(Layout layout, int64_t a, int64_t b, int64_t c, int64_t d) {
  return layout == Layout::kNchw ? std::array<int64_t, 4>{a, b, c, d} : std::array<int64_t, 4>{a, c, d, b};
}

ElementType ElementTypeOf(DType d) {
  return d == DType::kF32 ? ElementType::kF32 : d == DType::kF16 ? ElementType::kF16 : ElementType::kBF16;
}

constexpr int64_t kMaxAttr = int64_t(1) << 30;

// Reads a pair attribute ("stride=2,1" or "stride=2"), checking its range.
Status PairAttr(const Workload& w, std::string_view op, const char* name, int64_t fallback, int64_t least,
                Dims* out) {
  *out = Dims{fallback, fallback};
  if (w.FindAttr(name) == nullptr) return absl::OkStatus();
  OPSCHED_ASSIGN_OR_RETURN(Dims v, w.GetInts(name));
  if (v.size() == 1) v.push_back(v[0]);
  if (v.size() != 2) {
    return absl::InvalidArgumentError(fmt::format("{}: {} takes one or two values (height,width), got {}", op,
                                                  name, fmt::join(v, ",")));
  }
  for (int64_t x : v) {
    if (x < least) {
      return absl::InvalidArgumentError(fmt::format("{}: {} {} must be at least {}", op, name, x, least));
    }
    if (x > kMaxAttr) {  // keeps the output-size arithmetic far from overflow
      return absl::InvalidArgumentError(fmt::format("{}: {} {} is larger than {}", op, name, x, kMaxAttr));
    }
  }
  *out = v;
  return absl::OkStatus();
}

StatusOr<std::string> WordAttr(const Workload& w, std::string_view op, const char* name, const char* fallback,
                               std::initializer_list<const char*> allowed) {
  if (w.FindAttr(name) == nullptr) return std::string(fallback);
  OPSCHED_ASSIGN_OR_RETURN(std::string_view v, w.GetString(name));
  for (const char* a : allowed) {
    if (v == a) return std::string(v);
  }
  return absl::InvalidArgumentError(
      fmt::format("{}: unknown {} '{}' (expected {})", op, name, v, fmt::join(allowed, ", ")));
}

Status CheckRank4(std::string_view op, const char* name, const TensorDesc& t) {
  if (t.rank() != 4) {
    return absl::InvalidArgumentError(fmt::format("{}: {} is {}, expected rank 4", op, name, t.ToString()));
  }
  return absl::OkStatus();
}

// The three ops share everything but their extra tensor, attributes and outputs.
class Conv2dOpDefBase : public OpDef {
 public:
  explicit Conv2dOpDefBase(Kind kind) : kind_(kind) {}

  std::string_view name() const override { return OpName(kind_); }
  std::vector<std::string> InputNames() const override {
    if (kind_ == Kind::kBiasActivation) return {"x", "w", "b"};
    if (kind_ == Kind::kBackward) return {"x", "w", "dy"};
    return {"x", "w"};
  }
  std::vector<std::string> OutputNames() const override {
    if (kind_ == Kind::kBackward) return {"dx", "dw"};
    return {"y"};
  }

  Status Canonicalize(Workload* wl) const override {
    const std::string_view op = name();
    const std::vector<std::string> names = InputNames();
    for (const std::string& n : names) {
      if (wl->FindTensor(n) == nullptr) {
        return absl::InvalidArgumentError(fmt::format("{} needs tensors {}", op, fmt::join(names, ", ")));
      }
    }
    if (wl->tensors().size() != names.size()) {
      return absl::InvalidArgumentError(fmt::format("{} takes exactly tensors {}", op, fmt::join(names, ", ")));
    }
    const TensorDesc& x = *wl->FindTensor("x");
    const TensorDesc& w = *wl->FindTensor("w");
    if (!IsFloating(x.dtype())) {
      return absl::InvalidArgumentError(
          fmt::format("{}: x is {}, expected f32, f16 or bf16", op, DTypeName(x.dtype())));
    }
    for (const std::string& n : names) {
      const TensorDesc& t = *wl->FindTensor(n);
      if (t.dtype() != x.dtype()) {
        return absl::InvalidArgumentError(
            fmt::format("{}: {} is {} but x is {}", op, n, DTypeName(t.dtype()), DTypeName(x.dtype())));
      }
      if (!t.is_non_overlapping()) {
        return absl::InvalidArgumentError(fmt::format("{}: {} has overlapping strides", op, n));
      }
    }
    OPSCHED_RETURN_IF_ERROR(CheckRank4(op, "x", x));
    OPSCHED_RETURN_IF_ERROR(CheckRank4(op, "w", w));
    Dims stride, pad, dilation;
    OPSCHED_RETURN_IF_ERROR(PairAttr(*wl, op, "stride", 1, 1, &stride));
    OPSCHED_RETURN_IF_ERROR(PairAttr(*wl, op, "pad", 0, 0, &pad));
    OPSCHED_RETURN_IF_ERROR(PairAttr(*wl, op, "dilation", 1, 1, &dilation));
    int64_t groups = 1;
    if (wl->FindAttr("groups") != nullptr) {
      OPSCHED_ASSIGN_OR_RETURN(groups, wl->GetInt("groups"));
    }
    OPSCHED_ASSIGN_OR_RETURN(std::string layout, WordAttr(*wl, op, "layout", "nchw", {"nchw", "nhwc"}));
    OPSCHED_ASSIGN_OR_RETURN(std::string math, WordAttr(*wl, op, "math", "fp32", {"fp32", "tf32"}));
    std::string act;
    if (kind_ == Kind::kBiasActivation) {
      OPSCHED_ASSIGN_OR_RETURN(act, WordAttr(*wl, op, "act", "identity", {"identity", "relu", "sigmoid", "tanh"}));
    }
    for (const Attr& a : wl->attrs()) {
      const bool known = a.name == "stride" || a.name == "pad" || a.name == "dilation" || a.name == "groups" ||
                         a.name == "layout" || a.name == "math" || (a.name == "act" && kind_ == Kind::kBiasActivation);
      if (!known) {
        return absl::InvalidArgumentError(fmt::format(
            "{}: unknown attribute '{}' (expected stride, pad, dilation, groups, layout, math{})", op, a.name,
            kind_ == Kind::kBiasActivation ? ", act" : ""));
      }
    }
    if (math == "tf32" && x.dtype() != DType::kF32) {
      return absl::InvalidArgumentError(fmt::format("{}: math=tf32 applies to f32 tensors, x is {}", op,
                                                    DTypeName(x.dtype())));
    }
    const Layout l = layout == "nhwc" ? Layout::kNhwc : Layout::kNchw;
    const std::array<int, 4> o = LogicalOrder(l);
    const int64_t n = x.dim(o[0]), c = x.dim(o[1]), h = x.dim(o[2]), wd = x.dim(o[3]);
    const int64_t k = w.dim(o[0]), cg = w.dim(o[1]), r = w.dim(o[2]), s = w.dim(o[3]);
    if (groups < 1 || c % groups != 0 || k % groups != 0) {
      return absl::InvalidArgumentError(fmt::format(
          "{}: groups={} must divide the {} input channels and the {} filters", op, groups, c, k));
    }
    if (cg != c / groups) {
      return absl::InvalidArgumentError(fmt::format(
          "{}: w {} has {} input channels per filter, expected C/groups = {}/{} = {} ({} layout)", op,
          w.ToString(), cg, c, groups, c / groups, layout));
    }
    if (r < 1 || s < 1 || k < 1 || c < 1) {
      return absl::InvalidArgumentError(fmt::format("{}: w {} and x {} need at least one filter, channel and tap",
                                                    op, w.ToString(), x.ToString()));
    }
    const int64_t p = OutputSize(h, r, stride[0], pad[0], dilation[0]);
    const int64_t q = OutputSize(wd, s, stride[1], pad[1], dilation[1]);
    if (p < 1 || q < 1) {
      return absl::InvalidArgumentError(fmt::format(
          "{}: the {}x{} filter (dilation {},{}) does not fit the {}x{} input padded by {},{}", op, r, s,
          dilation[0], dilation[1], h, wd, pad[0], pad[1]));
    }
    if (kind_ == Kind::kBiasActivation) {
      const TensorDesc& b = *wl->FindTensor("b");
      if (b.rank() != 1 || b.dim(0) != k) {
        return absl::InvalidArgumentError(
            fmt::format("{}: b is {}, expected [{}] (one bias per filter)", op, b.ToString(), k));
      }
    }
    if (kind_ == Kind::kBackward) {
      const TensorDesc& dy = *wl->FindTensor("dy");
      const std::array<int64_t, 4> want = Shape(l, n, k, p, q);
      if (!std::equal(dy.shape().begin(), dy.shape().end(), want.begin(), want.end())) {
        return absl::InvalidArgumentError(fmt::format("{}: dy is {}, expected [{}] (the output's shape, {} layout)",
                                                      op, dy.ToString(), fmt::join(want, ","), layout));
      }
    }
    Workload canonical{std::string(op)};
    for (const std::string& t : names) canonical.SetTensor(t, *wl->FindTensor(t));
    canonical.SetAttr("stride", stride);
    canonical.SetAttr("pad", pad);
    canonical.SetAttr("dilation", dilation);
    canonical.SetAttr("groups", groups);
    canonical.SetAttr("layout", layout);
    canonical.SetAttr("math", math);
    if (kind_ == Kind::kBiasActivation) canonical.SetAttr("act", act);
    *wl = std::move(canonical);
    return absl::OkStatus();
  }

  std::vector<TensorDesc> OutputDescs(const Workload& wl) const override {
    const Problem p = MakeProblem(wl);
    const DType dtype = wl.FindTensor("x")->dtype();
    if (kind_ == Kind::kBackward) {
      return {TensorDesc::Contiguous(dtype, Shape(p.layout, p.n, p.c, p.h, p.w)),
              TensorDesc::Contiguous(dtype, Shape(p.layout, p.k, p.channels_per_group(), p.r, p.s))};
    }
    return {TensorDesc::Contiguous(dtype, Shape(p.layout, p.n, p.k, p.p, p.q))};
  }

  Status Generate(const Workload& wl, const GeneratorOptions&, std::mt19937_64& rng,
                  std::vector<HostTensor>* inputs) const override {
    const Problem p = MakeProblem(wl);
    std::uniform_real_distribution<double> value(-1.0, 1.0);
    // Filters scaled by 1/sqrt(fan-in) (He-style): outputs stay O(1) as layers grow.
    const double scale = 1.0 / std::sqrt(static_cast<double>(std::max<int64_t>(p.reduction_length(), 1)));
    const std::vector<std::string> names = InputNames();
    for (size_t i = 0; i < names.size(); ++i) {
      HostTensor& t = (*inputs)[i];
      const double f = names[i] == "w" ? scale : names[i] == "b" ? 0.5 : 1.0;
      for (int64_t e = 0; e < t.desc().numel(); ++e) t.Set(e, value(rng) * f);
    }
    return absl::OkStatus();
  }

  StatusOr<std::vector<std::vector<double>>> Reference(const Workload& wl,
                                                       const std::vector<HostTensor>& inputs) const override {
    return ReferenceOutputs(MakeProblem(wl), inputs, /*magnitudes=*/false);
  }

  // Per output element: the sum of |products| it accumulates, the scale of any rounding.
  struct Magnitudes : CheckContext {
    std::vector<std::vector<double>> sums;
  };

  std::unique_ptr<CheckContext> PrepareCheck(const Workload& wl,
                                             const std::vector<HostTensor>& inputs) const override {
    auto m = std::make_unique<Magnitudes>();
    StatusOr<std::vector<std::vector<double>>> sums = ReferenceOutputs(MakeProblem(wl), inputs, true);
    if (sums.ok()) m->sums = *std::move(sums);
    return m;
  }

  Status Check(const Workload& wl, const std::vector<HostTensor>& inputs, const std::vector<HostTensor>& outputs,
               const std::vector<std::vector<double>>& reference, bool,
               const CheckContext* context) const override {
    std::unique_ptr<CheckContext> local;
    if (context == nullptr) {
      local = PrepareCheck(wl, inputs);
      context = local.get();
    }
    const auto& m = static_cast<const Magnitudes&>(*context);
    if (m.sums.size() != outputs.size()) return absl::InternalError(fmt::format("{}: no error bounds", name()));
    const Problem p = MakeProblem(wl);
    const std::vector<std::string> names = OutputNames();
    for (size_t i = 0; i < outputs.size(); ++i) {
      const std::vector<double>& mag = m.sums.at(i);
      const CloseBound bound = BoundFor(p, outputs[i].desc().dtype(), TermsOf(p, names[i]));
      const double max_magnitude = mag.empty() ? 0.0 : *std::max_element(mag.begin(), mag.end());
      for (int64_t e = 0; e < outputs[i].desc().numel(); ++e) {
        const double got = outputs[i].Get(e);
        const double want = reference[i][e];
        if (!bound.Holds(got, want, mag[e], max_magnitude)) {
          return MismatchError(p, name(), names[i], e, got, want, bound.Tolerance(mag[e], max_magnitude, want),
                               mag[e]);
        }
      }
    }
    return absl::OkStatus();
  }

  std::vector<double> ModelFeatures(const Workload& wl) const override {
    const Problem p = MakeProblem(wl);
    auto lg = [](double v) { return std::log2(1.0 + v); };
    const double flops = 2.0 * p.n * p.k * p.p * p.q * p.reduction_length();
    const double bytes = static_cast<double>(ElementBytes(p.type)) *
                         (p.n * p.c * p.h * p.w + p.k * p.channels_per_group() * p.r * p.s + p.n * p.k * p.p * p.q);
    return {lg(p.n),
            lg(p.c),
            lg(p.h),
            lg(p.w),
            lg(p.k),
            static_cast<double>(p.r),
            static_cast<double>(p.s),
            lg(p.p),
            lg(p.q),
            static_cast<double>(p.stride_h),
            static_cast<double>(p.stride_w),
            static_cast<double>(p.pad_h),
            static_cast<double>(p.dil_h),
            static_cast<double>(p.dil_w),
            lg(p.groups),
            p.groups == p.c && p.groups > 1 ? 1.0 : 0.0,
            lg(p.channels_per_group()),
            lg(p.filters_per_group()),
            static_cast<double>(p.layout),
            static_cast<double>(p.math),
            static_cast<double>(p.type),
            static_cast<double>(p.act),
            lg(flops),
            lg(bytes),
            lg(flops) - lg(bytes)};
  }

  double Flops(const Workload& wl) const override {
    const Problem p = MakeProblem(wl);
    const double forward = 2.0 * p.n * p.k * p.p * p.q * p.reduction_length();
    return kind_ == Kind::kBackward ? 2 * forward : forward;
  }

 private:
  Kind kind_;
};

class Conv2dOpDef : public Conv2dOpDefBase {
 public:
  Conv2dOpDef() : Conv2dOpDefBase(Kind::kForward) {}
};
class Conv2dBiasActOpDef : public Conv2dOpDefBase {
 public:
  Conv2dBiasActOpDef() : Conv2dOpDefBase(Kind::kBiasActivation) {}
};
class Conv2dBackwardOpDef : public Conv2dOpDefBase {
 public:
  Conv2dBackwardOpDef() : Conv2dOpDefBase(Kind::kBackward) {}
};

}  // namespace

void LogicalStrides(Layout layout, absl::Span<const int64_t> strides, int64_t out[4]) {
  const std::array<int, 4> order = LogicalOrder(layout);
  for (int i = 0; i < 4; ++i) out[i] = strides[order[i]];
}

std::string_view OpName(Kind kind) {
  return kind == Kind::kForward ? "conv2d" : kind == Kind::kBiasActivation ? "conv2d_bias_act" : "conv2d_backward";
}

std::string_view ActivationName(Activation act) { return kActivationNames[static_cast<int>(act)]; }

StatusOr<Activation> ParseActivation(std::string_view name) {
  for (int i = 0; i < 4; ++i) {
    if (name == kActivationNames[i]) return static_cast<Activation>(i);
  }
  return absl::InvalidArgumentError(
      fmt::format("conv2d: unknown activation '{}' (expected identity, relu, sigmoid or tanh)", name));
}

Problem MakeProblem(const Workload& wl) {
  Problem p;
  const std::string& op = wl.op();
  p.kind = op == "conv2d_backward" ? Kind::kBackward : op == "conv2d_bias_act" ? Kind::kBiasActivation : Kind::kForward;
  p.layout = LayoutOf(wl);
  p.math = *wl.GetString("math") == "tf32" ? Math::kTf32 : Math::kFp32;
  if (p.kind == Kind::kBiasActivation) p.act = *ParseActivation(*wl.GetString("act"));
  const TensorDesc& x = *wl.FindTensor("x");
  const TensorDesc& w = *wl.FindTensor("w");
  p.type = ElementTypeOf(x.dtype());
  const std::array<int, 4> o = LogicalOrder(p.layout);
  p.n = x.dim(o[0]);
  p.c = x.dim(o[1]);
  p.h = x.dim(o[2]);
  p.w = x.dim(o[3]);
  p.k = w.dim(o[0]);
  p.r = w.dim(o[2]);
  p.s = w.dim(o[3]);
  const Dims stride = *wl.GetInts("stride"), pad = *wl.GetInts("pad"), dilation = *wl.GetInts("dilation");
  p.stride_h = stride[0];
  p.stride_w = stride[1];
  p.pad_h = pad[0];
  p.pad_w = pad[1];
  p.dil_h = dilation[0];
  p.dil_w = dilation[1];
  p.groups = *wl.GetInt("groups");
  p.p = OutputSize(p.h, p.r, p.stride_h, p.pad_h, p.dil_h);
  p.q = OutputSize(p.w, p.s, p.stride_w, p.pad_w, p.dil_w);
  // Outputs are contiguous in the layout. Dims hold rank 4 inline: nothing is allocated
  // (MakeProblem runs on every call).
  auto contiguous = [&](int64_t a, int64_t b, int64_t c, int64_t d, int64_t out[4]) {
    LogicalStrides(p.layout, TensorDesc::ContiguousStrides(Shape(p.layout, a, b, c, d)), out);
  };
  LogicalStrides(p.layout, x.strides(), p.x_strides);
  LogicalStrides(p.layout, w.strides(), p.w_strides);
  if (p.kind == Kind::kBackward) {
    LogicalStrides(p.layout, wl.FindTensor("dy")->strides(), p.y_strides);
    contiguous(p.n, p.c, p.h, p.w, p.dx_strides);
    contiguous(p.k, p.c / p.groups, p.r, p.s, p.dw_strides);
  } else {
    contiguous(p.n, p.k, p.p, p.q, p.y_strides);
  }
  if (p.kind == Kind::kBiasActivation) p.b_stride = wl.FindTensor("b")->stride(0);
  return p;
}

Problem MakeProblem(const Workload& wl, absl::Span<const Tensor> t) { return WithTensors(MakeProblem(wl), t); }

Problem WithTensors(Problem p, absl::Span<const Tensor> t) {
  p.x = t[0].data;
  p.wt = t[1].data;
  switch (p.kind) {
    case Kind::kForward:
      p.y = t[2].data;
      break;
    case Kind::kBiasActivation:
      p.b = t[2].data;
      p.y = t[3].data;
      break;
    case Kind::kBackward:
      p.y = t[2].data;
      p.dx = t[3].data;
      p.dw = t[4].data;
      break;
  }
  return p;
}

Status RegisterDef(Registry& registry) {
  OPSCHED_RETURN_IF_ERROR(registry.AddOp(std::make_unique<Conv2dOpDef>()));
  OPSCHED_RETURN_IF_ERROR(registry.AddOp(std::make_unique<Conv2dBiasActOpDef>()));
  OPSCHED_RETURN_IF_ERROR(registry.AddOp(std::make_unique<Conv2dBackwardOpDef>()));
  return absl::OkStatus();
}

}  // namespace opsched::conv2d
