#include "ops/scatter/scatter_def.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>

#include "core/data_error.h"
#include "core/format.h"
#include "ops/scatter/scatter_combine_integer.h"
#include "ops/scatter/scatter_register.h"

#include "registry/registry.h"

namespace opsched::scatter {
namespace {

constexpr const char* kReductionNames[] = {"none", "add", "mul", "min", "max"};

std::string Coords(const TensorDesc& d, int64_t linear) {
  std::vector<int64_t> c(d.rank());
  for (int i = d.rank() - 1; i >= 0; --i) {
    c[i] = linear % d.dim(i);
    linear /= d.dim(i);
  }
  return fmt::format("[{}]", fmt::join(c, ","));
}

// Row-major logical offset into data of position p of indices with the axis coordinate
// replaced by `index` (already normalised).
int64_t TargetOf(const TensorDesc& indices, const TensorDesc& data, int axis, int64_t p,
                 int64_t index) {
  int64_t coord[kMaxRank];
  for (int i = indices.rank() - 1; i >= 0; --i) {
    coord[i] = p % indices.dim(i);
    p /= indices.dim(i);
  }
  coord[axis] = index;
  int64_t t = 0;
  for (int i = 0; i < data.rank(); ++i) t = t * data.dim(i) + coord[i];
  return t;
}

double Combine(Reduction r, double acc, double v) {
  switch (r) {
    case Reduction::kNone:
      return v;
    case Reduction::kAdd:
      return acc + v;
    case Reduction::kMul:
      return acc * v;
    case Reduction::kMin:
      return std::isnan(acc) || std::isnan(v) ? std::nan("") : std::min(acc, v);
    case Reduction::kMax:
      return std::isnan(acc) || std::isnan(v) ? std::nan("") : std::max(acc, v);
  }
  return v;
}

class ScatterOp : public OpDef {
 public:
  std::string_view name() const override { return "scatter"; }
  std::vector<std::string> InputNames() const override { return {"data", "indices", "updates"}; }
  std::vector<std::string> OutputNames() const override { return {"out"}; }

  Status Canonicalize(Workload* w) const override {
    const TensorDesc* data = w->FindTensor("data");
    const TensorDesc* indices = w->FindTensor("indices");
    const TensorDesc* updates = w->FindTensor("updates");
    if (data == nullptr || indices == nullptr || updates == nullptr) {
      return absl::InvalidArgumentError("scatter needs tensors data, indices and updates");
    }
    if (w->tensors().size() != 3) {
      return absl::InvalidArgumentError("scatter takes exactly data, indices and updates");
    }
    if (updates->dtype() != data->dtype()) {
      return absl::InvalidArgumentError(fmt::format("scatter: updates are {} but data is {}",
                                                    DTypeName(updates->dtype()),
                                                    DTypeName(data->dtype())));
    }
    if (!IsInteger(indices->dtype())) {
      return absl::InvalidArgumentError(fmt::format("scatter: indices are {}, expected i32 or i64",
                                                    DTypeName(indices->dtype())));
    }
    const int rank = data->rank();
    if (rank < 1 || rank > kMaxRank) {
      return absl::InvalidArgumentError(
          fmt::format("scatter: data has rank {}, supported ranks are 1 to {}", rank, kMaxRank));
    }
    if (indices->rank() != rank || updates->rank() != rank) {
      return absl::InvalidArgumentError(fmt::format(
          "scatter: data, indices and updates must have one rank (got {}, {}, {})", rank,
          indices->rank(), updates->rank()));
    }
    if (indices->shape() != updates->shape()) {
      return absl::InvalidArgumentError(fmt::format(
          "scatter: updates {} and indices {} must have the same shape", updates->ToString(),
          indices->ToString()));
    }
    if (!data->is_non_overlapping()) {
      return absl::InvalidArgumentError("scatter: data has overlapping strides");
    }
    int64_t axis = 0;
    if (w->FindAttr("axis") != nullptr) {
      OPSCHED_ASSIGN_OR_RETURN(axis, w->GetInt("axis"));
    }
    if (axis < -rank || axis >= rank) {
      return absl::InvalidArgumentError(
          fmt::format("scatter: axis {} is out of range for rank {}", axis, rank));
    }
    if (axis < 0) axis += rank;
    for (int d = 0; d < rank; ++d) {
      if (d != axis && indices->dim(d) > data->dim(d)) {
        return absl::InvalidArgumentError(fmt::format(
            "scatter: indices {} exceed data {} in dimension {} (only the axis may be larger)",
            indices->ToString(), data->ToString(), d));
      }
    }
    std::string reduction = "none";
    if (w->FindAttr("reduction") != nullptr) {
      OPSCHED_ASSIGN_OR_RETURN(std::string_view r, w->GetString("reduction"));
      OPSCHED_RETURN_IF_ERROR(ParseReduction(r).status());
      reduction = std::string(r);
    }
    for (const Attr& a : w->attrs()) {
      if (a.name != "axis" && a.name != "reduction") {
        return absl::InvalidArgumentError(
            fmt::format("scatter: unknown attribute '{}' (expected axis, reduction)", a.name));
      }
    }
    Workload canonical("scatter");
    canonical.SetTensor("data", *data);
    canonical.SetTensor("indices", *indices);
    canonical.SetTensor("updates", *updates);
    canonical.SetAttr("axis", axis);
    canonical.SetAttr("reduction", reduction);
    *w = std::move(canonical);
    return absl::OkStatus();
  }

  std::vector<TensorDesc> OutputDescs(const Workload& w) const override {
    return {*w.FindTensor("data")};
  }

  Status Generate(const Workload& w, const GeneratorOptions& options, std::mt19937_64& rng,
                  std::vector<HostTensor>* inputs) const override {
    HostTensor& data = (*inputs)[0];
    HostTensor& indices = (*inputs)[1];
    HostTensor& updates = (*inputs)[2];
    const int axis = static_cast<int>(*w.GetInt("axis"));
    const int64_t axis_size = data.desc().dim(axis);
    if (IsInteger(data.desc().dtype())) {
      // Integers: data in [-50, 50]; updates too, or in [-2, 2] for mul, so that every
      // result, wrapped around or not, stays exact in the float64 reference.
      const bool mul = *w.GetString("reduction") == "mul";
      std::uniform_int_distribution<int64_t> data_value(-50, 50);
      std::uniform_int_distribution<int64_t> update_value(mul ? -2 : -50, mul ? 2 : 50);
      for (int64_t i = 0; i < data.desc().numel(); ++i) data.Set(i, static_cast<double>(data_value(rng)));
      for (int64_t i = 0; i < updates.desc().numel(); ++i) updates.Set(i, static_cast<double>(update_value(rng)));
    } else {
      std::uniform_real_distribution<double> value(-1.0, 1.0);
      for (int64_t i = 0; i < data.desc().numel(); ++i) data.Set(i, value(rng));
      for (int64_t i = 0; i < updates.desc().numel(); ++i) updates.Set(i, value(rng));
    }
    const int64_t n = indices.desc().numel();
    if (n > 0 && axis_size == 0) {
      return absl::InvalidArgumentError("scatter: no valid index exists for an empty axis");
    }
    std::uniform_int_distribution<int64_t> uniform(0, std::max<int64_t>(axis_size - 1, 0));
    std::bernoulli_distribution negative(options.negative_index_fraction);
    const TensorDesc& idx = indices.desc();
    const int64_t along = idx.dim(axis);
    for (int64_t p = 0; p < n; ++p) {
      int64_t index = uniform(rng);
      if (options.index_pattern == "hot") {
        index = std::uniform_int_distribution<int64_t>(0, 99)(rng) < 90
                    ? std::uniform_int_distribution<int64_t>(0, std::min<int64_t>(3, axis_size - 1))(rng)
                    : index;
      }
      if (negative(rng)) index -= axis_size;
      indices.Set(p, static_cast<double>(index));
    }
    if (options.index_pattern == "unique" && along <= axis_size) {
      // Each slice along the axis gets distinct indices (a prefix of a permutation).
      std::vector<int64_t> perm(axis_size);
      const int64_t stride_in_logical = [&] {
        int64_t s = 1;
        for (int d = idx.rank() - 1; d > axis; --d) s *= idx.dim(d);
        return s;
      }();
      for (int64_t p = 0; p < n; ++p) {
        if ((p / stride_in_logical) % along != 0) continue;  // first element of its slice
        std::iota(perm.begin(), perm.end(), 0);
        std::shuffle(perm.begin(), perm.end(), rng);
        for (int64_t a = 0; a < along; ++a) {
          int64_t index = perm[a];
          if (negative(rng)) index -= axis_size;
          indices.Set(p + a * stride_in_logical, static_cast<double>(index));
        }
      }
    }
    return absl::OkStatus();
  }

  StatusOr<std::vector<std::vector<double>>> Reference(
      const Workload& w, const std::vector<HostTensor>& inputs) const override {
    const HostTensor& data = inputs[0];
    const HostTensor& indices = inputs[1];
    const HostTensor& updates = inputs[2];
    const int axis = static_cast<int>(*w.GetInt("axis"));
    OPSCHED_ASSIGN_OR_RETURN(Reduction r, ParseReduction(*w.GetString("reduction")));
    const DType dtype = data.desc().dtype();
    const bool integer = IsInteger(dtype);
    // Integers are combined exactly in int64, wrapped to the dtype's width (i32 wraps at
    // 2^32 like the kernels); the doubles returned are exact up to 2^53.
    std::vector<double> out(data.desc().numel());
    std::vector<int64_t> exact(integer ? out.size() : 0);
    for (size_t i = 0; i < out.size(); ++i) {
      if (integer) {
        exact[i] = data.GetInt(i);
      } else {
        out[i] = data.Get(i);
      }
    }
    const int64_t axis_size = data.desc().dim(axis);
    for (int64_t p = 0; p < indices.desc().numel(); ++p) {
      const int64_t raw = indices.GetInt(p);
      int64_t index;
      if (!NormaliseIndex(raw, axis_size, &index)) return OutOfRangeError(w, p, raw);
      const int64_t t = TargetOf(indices.desc(), data.desc(), axis, p, index);
      if (!integer) {
        out[t] = Combine(r, out[t], updates.Get(p));
      } else if (dtype == DType::kI32) {
        exact[t] = CombineInteger<int32_t>(r, static_cast<int32_t>(exact[t]), static_cast<int32_t>(updates.GetInt(p)));
      } else {
        exact[t] = CombineInteger<int64_t>(r, exact[t], updates.GetInt(p));
      }
    }
    for (size_t i = 0; i < exact.size(); ++i) out[i] = static_cast<double>(exact[i]);
    return std::vector<std::vector<double>>{std::move(out)};
  }

  // Per target: how many updates hit it, the sum of magnitudes (for accumulation
  // bounds) and every competing update in row-major order (CSR: values[first[t] ..
  // first[t + 1])), for reduction none.
  struct Hits : CheckContext {
    std::vector<int32_t> count;
    std::vector<double> magnitude;
    std::vector<int64_t> first;
    std::vector<double> values;
  };

  std::unique_ptr<CheckContext> PrepareCheck(const Workload& w,
                                             const std::vector<HostTensor>& inputs) const override {
    const HostTensor& data = inputs[0];
    const HostTensor& indices = inputs[1];
    const HostTensor& updates = inputs[2];
    const int axis = static_cast<int>(*w.GetInt("axis"));
    const bool none = *w.GetString("reduction") == "none";
    auto hits = std::make_unique<Hits>();
    const int64_t total = data.desc().numel();
    const int64_t n = indices.desc().numel();
    const int64_t axis_size = data.desc().dim(axis);
    std::vector<int64_t> target_of(n, -1);
    hits->count.assign(total, 0);
    hits->magnitude.resize(total);
    for (int64_t t = 0; t < total; ++t) hits->magnitude[t] = std::abs(data.Get(t));
    for (int64_t p = 0; p < n; ++p) {
      int64_t index;
      if (!NormaliseIndex(static_cast<int64_t>(indices.Get(p)), axis_size, &index)) continue;
      const int64_t t = TargetOf(indices.desc(), data.desc(), axis, p, index);
      target_of[p] = t;
      ++hits->count[t];
      hits->magnitude[t] += std::abs(updates.Get(p));
    }
    if (none) {
      hits->first.assign(total + 1, 0);
      for (int64_t t = 0; t < total; ++t) hits->first[t + 1] = hits->first[t] + hits->count[t];
      hits->values.resize(hits->first[total]);
      std::vector<int64_t> fill(hits->first.begin(), hits->first.end() - 1);
      for (int64_t p = 0; p < n; ++p) {
        if (target_of[p] >= 0) hits->values[fill[target_of[p]]++] = updates.Get(p);
      }
    }
    return hits;
  }

  Status Check(const Workload& w, const std::vector<HostTensor>& inputs,
               const std::vector<HostTensor>& outputs,
               const std::vector<std::vector<double>>& reference, bool deterministic,
               const CheckContext* context) const override {
    std::unique_ptr<CheckContext> local;
    if (context == nullptr) {
      local = PrepareCheck(w, inputs);
      context = local.get();
    }
    const Hits& hits = static_cast<const Hits&>(*context);
    const HostTensor& data = inputs[0];
    const HostTensor& out = outputs[0];
    OPSCHED_ASSIGN_OR_RETURN(Reduction r, ParseReduction(*w.GetString("reduction")));
    const DType dtype = data.desc().dtype();
    const double u = UnitRoundoff(dtype);
    const int64_t total = data.desc().numel();
    for (int64_t t = 0; t < total; ++t) {
      const double got = out.Get(t);
      const double want = reference[0][t];
      const int64_t count = hits.count[t];
      bool ok = false;
      std::string allowed;
      if (r == Reduction::kNone && count > 0 && !deterministic) {
        const auto begin = hits.values.begin() + hits.first[t];
        const auto end = hits.values.begin() + hits.first[t + 1];
        ok = std::find(begin, end, got) != end;
        if (!ok) allowed = fmt::format("one of the {} competing updates", count);
      } else if (r == Reduction::kNone || r == Reduction::kMin || r == Reduction::kMax || count == 0) {
        ok = got == want || (std::isnan(got) && std::isnan(want));
        if (!ok) allowed = fmt::format("{}", want);
      } else {
        // Worst-case accumulation bound gamma_k = k u / (1 - k u) on the sum of magnitudes
        // (add) or on the product (mul), plus the final rounding to the output type.
        const double k = static_cast<double>(count) + 1;
        const double gamma = std::min(1.0, k * u / std::max(1e-300, 1 - k * u));
        const double bound = r == Reduction::kAdd
                                 ? gamma * hits.magnitude[t] + u * std::abs(want)
                                 : (gamma + u) * std::abs(want) + SmallestNormal(dtype);
        ok = std::abs(got - want) <= bound;
        if (!ok) allowed = fmt::format("{} within {}", want, bound);
      }
      if (!ok) return MismatchError(data.desc(), t, got, allowed, count);
    }
    return absl::OkStatus();
  }

  Status DeviceError(const Workload& w, int64_t position, int64_t value) const override {
    return OutOfRangeError(w, position, value);
  }

  std::vector<double> ModelFeatures(const Workload& w) const override {
    const Params p = MakeParams(w);
    auto lg = [](double v) { return std::log2(1.0 + v); };
    const double outer = p.axis_size * p.inner > 0 ? static_cast<double>(p.data_n) / (p.axis_size * p.inner) : 0;
    const DType dtype = w.FindTensor("data")->dtype();
    return {lg(p.n),
            lg(p.data_n),
            lg(p.axis_size),
            lg(p.inner),
            lg(p.index_axis),
            lg(outer),
            lg(p.n) - lg(p.data_n),  // updates per target, in log2
            static_cast<double>(p.rank),
            p.axis == p.rank - 1 ? 1.0 : 0.0,
            p.fast ? 1.0 : 0.0,
            static_cast<double>(p.reduction),
            static_cast<double>(dtype),
            static_cast<double>(DTypeSize(dtype)),
            p.index64 ? 1.0 : 0.0};
  }
};

}  // namespace

Status MismatchError(const TensorDesc& data, int64_t target, double got, std::string_view allowed,
                     int64_t count) {
  return absl::DataLossError(fmt::format("scatter: out{} is {}, expected {} ({} updates hit it)",
                                         Coords(data, target), got, allowed, count));
}

Status OutOfRangeError(const Workload& w, int64_t position, int64_t value) {
  const TensorDesc& indices = *w.FindTensor("indices");
  const TensorDesc& data = *w.FindTensor("data");
  const int axis = static_cast<int>(*w.GetInt("axis"));
  const int64_t d = data.dim(axis);
  return MarkDataError(absl::InvalidArgumentError(
      fmt::format("scatter: index {} at position {} is out of range [{},{}) of axis {}", value,
                  Coords(indices, position), -d, d, axis)));
}

std::string_view ReductionName(Reduction r) { return kReductionNames[static_cast<int>(r)]; }

StatusOr<Reduction> ParseReduction(std::string_view name) {
  for (int i = 0; i < 5; ++i) {
    if (name == kReductionNames[i]) return static_cast<Reduction>(i);
  }
  return absl::InvalidArgumentError(
      fmt::format("scatter: unknown reduction '{}' (expected none, add, mul, min or max)", name));
}

Params MakeParams(const Workload& w) {
  const TensorDesc& data = *w.FindTensor("data");
  const TensorDesc& indices = *w.FindTensor("indices");
  const TensorDesc& updates = *w.FindTensor("updates");
  Params p;
  p.rank = data.rank();
  p.axis = static_cast<int32_t>(*w.GetInt("axis"));
  p.reduction = *ParseReduction(*w.GetString("reduction"));
  // ElementType mirrors DType value for value.
  static_assert(int(ElementType::kF32) == int(DType::kF32) && int(ElementType::kF16) == int(DType::kF16) &&
                int(ElementType::kBF16) == int(DType::kBF16) && int(ElementType::kI32) == int(DType::kI32) &&
                int(ElementType::kI64) == int(DType::kI64));
  p.type = static_cast<ElementType>(static_cast<int>(data.dtype()));
  p.index64 = indices.dtype() == DType::kI64;
  for (int d = 0; d < p.rank; ++d) {
    p.shape[d] = indices.dim(d);
    p.data_shape[d] = data.dim(d);
    p.index_strides[d] = indices.stride(d);
    p.update_strides[d] = updates.stride(d);
    p.data_strides[d] = data.stride(d);
    p.out_strides[d] = data.stride(d);
  }
  p.n = indices.numel();
  p.data_n = data.numel();
  p.axis_size = data.dim(p.axis);
  bool same_outside_axis = true;
  for (int d = 0; d < p.rank; ++d) {
    if (d != p.axis && indices.dim(d) != data.dim(d)) same_outside_axis = false;
  }
  p.fast = same_outside_axis && data.is_contiguous() && indices.is_contiguous() &&
           updates.is_contiguous();
  p.inner = 1;
  for (int d = p.axis + 1; d < p.rank; ++d) p.inner *= indices.dim(d);
  p.index_axis = indices.dim(p.axis);
  return p;
}

Status RegisterDef(Registry& registry) {
  return registry.AddOp(std::make_unique<ScatterOp>());
}

}  // namespace opsched::scatter
