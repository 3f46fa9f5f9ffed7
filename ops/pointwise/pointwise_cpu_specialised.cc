// pointwise_cpu_specialised: templated loops for the chains of pointwise_match.h, legal
// when the program matches, every tensor has one dtype and every input is periodic in
// the row-major output order (the full shape, a trailing-dimensions bias like [3072] of
// [8192,3072], or a single element). No bytecode at run time: the chain is a functor.
#include <algorithm>

#include "core/element.h"
#include "core/format.h"
#include "ops/pointwise/pointwise_cpu_loops.h"
#include "ops/pointwise/pointwise_def.h"
#include "ops/pointwise/pointwise_match.h"
#include "ops/pointwise/pointwise_register.h"
#include "registry/cpu_knobs.h"
#include "registry/registry.h"

namespace opsched::pointwise {

int64_t Period(const Bytecode& bc, int t) {
  int k = bc.rank;
  int64_t contiguous = 1;
  while (k > 0 && bc.strides[t][k - 1] == contiguous) {
    contiguous *= bc.shape[k - 1];
    --k;
  }
  for (int d = 0; d < k; ++d) {
    if (bc.strides[t][d] != 0) return 0;
  }
  return contiguous;
}

namespace {

Status Legal(const Compiled& c, ChainMatch* match) {
  std::optional<ChainMatch> m = MatchChain(c.program);
  if (!m) return absl::FailedPreconditionError("the program is none of bias+act, scale+residual, an activation alone, lstm cell");
  const Bytecode& bc = c.bytecode;
  for (int t = 1; t < bc.num_inputs + bc.num_outputs; ++t) {
    if (bc.types[t] != bc.types[0]) return absl::FailedPreconditionError("tensors of several dtypes");
  }
  for (int t = 0; t < bc.num_inputs && bc.numel > 0; ++t) {
    if (Period(bc, t) == 0) {
      return absl::FailedPreconditionError(
          fmt::format("input '{}' is neither full, a trailing bias nor one element", c.program.inputs[t]));
    }
  }
  *match = *m;
  return absl::OkStatus();
}

// out[o][i] = f(in[0][i % P0], ...) for i in [0, numel); all of element type T.
template <typename T, int kIn, int kOut, typename F>
void RunChain(const Bytecode& bc, const TensorPointers& p, const int (&roles)[kIn], const int (&outs)[kOut],
              int threads, F f) {
  using S = typename T::Storage;
  int64_t period[kIn];
  const S* in[kIn];
  S* out[kOut];
  for (int k = 0; k < kIn; ++k) {
    period[k] = Period(bc, roles[k]);
    in[k] = static_cast<const S*>(p.data[roles[k]]);
  }
  for (int k = 0; k < kOut; ++k) out[k] = static_cast<S*>(const_cast<void*>(p.data[bc.num_inputs + outs[k]]));
  cpu::Parallel(bc.numel, 65536, threads, [&](int64_t begin, int64_t end) {
    int64_t j[kIn];
    for (int k = 0; k < kIn; ++k) j[k] = begin % period[k];
    for (int64_t i = begin; i < end; ++i) {
      float x[kIn], y[kOut];
      for (int k = 0; k < kIn; ++k) {
        x[k] = T::Load(in[k][j[k]]);
        if (++j[k] == period[k]) j[k] = 0;
      }
      f(x, y);
      for (int k = 0; k < kOut; ++k) out[k][i] = T::Store(y[k]);
    }
  });
}

template <OpCode kAct>
float Act(float v) {
  return Unary(kAct, v);
}

// Calls run.operator()<act>() with the chain's activation as a template argument (one
// instantiation per activation of pointwise_match.h).
template <typename Run>
void WithAct(OpCode act, Run& run) {
  switch (act) {
    case OpCode::kRelu: run.template operator()<OpCode::kRelu>(); break;
    case OpCode::kGelu: run.template operator()<OpCode::kGelu>(); break;
    case OpCode::kGeluTanh: run.template operator()<OpCode::kGeluTanh>(); break;
    case OpCode::kSilu: run.template operator()<OpCode::kSilu>(); break;
    case OpCode::kSigmoid: run.template operator()<OpCode::kSigmoid>(); break;
    default: run.template operator()<OpCode::kTanh>(); break;
  }
}

template <typename T>
void RunMatch(const ChainMatch& m, const Bytecode& bc, const TensorPointers& p, int threads) {
  switch (m.chain) {
    case Chain::kBiasAct: {
      const int roles[2] = {m.role[0], m.role[1]};
      auto run = [&]<OpCode kAct>() {
        RunChain<T>(bc, p, roles, {0}, threads, [](const float (&x)[2], float (&y)[1]) { y[0] = Act<kAct>(x[0] + x[1]); });
      };
      WithAct(m.act, run);
      break;
    }
    case Chain::kScaleResidual:
      if (m.role[1] < 0) {
        const float s = m.constant;
        const int roles[2] = {m.role[0], m.role[2]};
        RunChain<T>(bc, p, roles, {0}, threads, [s](const float (&x)[2], float (&y)[1]) { y[0] = x[0] * s + x[1]; });
      } else {
        const int roles[3] = {m.role[0], m.role[1], m.role[2]};
        RunChain<T>(bc, p, roles, {0}, threads, [](const float (&x)[3], float (&y)[1]) { y[0] = x[0] * x[1] + x[2]; });
      }
      break;
    case Chain::kActivation: {
      const int roles[1] = {m.role[0]};
      auto run = [&]<OpCode kAct>() {
        RunChain<T>(bc, p, roles, {0}, threads, [](const float (&x)[1], float (&y)[1]) { y[0] = Act<kAct>(x[0]); });
      };
      WithAct(m.act, run);
      break;
    }
    case Chain::kLstmCell: {
      const int roles[5] = {m.role[0], m.role[1], m.role[2], m.role[3], m.role[4]};
      const int outs[2] = {m.c_out, m.h_out};
      RunChain<T>(bc, p, roles, outs, threads, [](const float (&x)[5], float (&y)[2]) {
        // x: i, f, g, o, c
        const float c = Sigmoid(x[1]) * x[4] + Sigmoid(x[0]) * tanhf(x[2]);
        y[0] = c;
        y[1] = Sigmoid(x[3]) * tanhf(c);
      });
      break;
    }
  }
}

class PointwiseCpuSpecialised : public Implementation {
 public:
  std::string_view op() const override { return "pointwise"; }
  std::string_view name() const override { return "pointwise_cpu_specialised"; }
  DeviceKind device_kind() const override { return DeviceKind::kCpu; }
  ImplementationTraits traits() const override { return {.deterministic = true, .in_place = true}; }
  Status Applicable(const Workload& w, const Target&) const override {
    OPSCHED_ASSIGN_OR_RETURN(std::shared_ptr<const Compiled> c, CompiledFor(w));
    ChainMatch m;
    return Legal(*c, &m);
  }
  ConfigSpace Space(const Workload&, const Target& target) const override { return CpuThreadKnobs(target).Space(); }
  // Prepare matches the chain once; Run binds the tensors.
  StatusOr<std::unique_ptr<Prepared>> Prepare(const Workload& w, const Config& config,
                                              const Target& target) const override {
    OPSCHED_ASSIGN_OR_RETURN(std::shared_ptr<const Compiled> c, CompiledFor(w));
    ChainMatch m;
    OPSCHED_RETURN_IF_ERROR(Legal(*c, &m));
    OPSCHED_ASSIGN_OR_RETURN(const CpuKnobs knobs, CpuThreadKnobs(target).Parse(config));
    const int threads = knobs.threads;
    return MakePrepared(0, [c, m, threads](const PreparedArgs& a) {
      const Bytecode& bc = c->bytecode;
      const TensorPointers p = cpu::PointersOf(a.tensors.data(), bc.num_inputs + bc.num_outputs);
      switch (bc.types[0]) {
        case ElementType::kF16: RunMatch<F16>(m, bc, p, threads); break;
        case ElementType::kBF16: RunMatch<BF16>(m, bc, p, threads); break;
        default: RunMatch<F32>(m, bc, p, threads); break;
      }
      return absl::OkStatus();
    });
  }
  Status Run(const RunArgs& a) const override { return PrepareAndRun(*this, a); }
};

}  // namespace

// For the strategy and the GPU implementation: the chain a canonical workload's program
// is, when the specialised implementations can run it.
std::optional<ChainMatch> SpecialisedChain(const Workload& canonical) {
  StatusOr<std::shared_ptr<const Compiled>> c = CompiledFor(canonical);
  ChainMatch m;
  if (!c.ok() || !Legal(**c, &m).ok()) return std::nullopt;
  return m;
}

Status RegisterCpuSpecialised(Registry& registry) {
  return registry.AddImplementation(std::make_unique<PointwiseCpuSpecialised>());
}

}  // namespace opsched::pointwise
