// Reduce on the CPU: a sequential loop, and a parallel one — over outputs when there
// are enough of them, otherwise over chunks of each output's terms whose partial
// results are combined in chunk order (deterministic for a given config).
#include <omp.h>

#include <algorithm>
#include <vector>

#include "ops/reduce/reduce_cpu_kernels.h"
#include "ops/reduce/reduce_def.h"
#include "ops/reduce/reduce_register.h"
#include "registry/cpu_knobs.h"
#include "registry/registry.h"

namespace opsched::reduce {
namespace {

// The problem parsed once, in Prepare, with one call's tensors bound.
Problem Bind(Problem p, const PreparedArgs& a) {
  p.x = a.tensors[0].data;
  p.y = a.tensors[1].data;
  return p;
}

class ReduceCpuBase : public Implementation {
 public:
  std::string_view op() const override { return "reduce"; }
  DeviceKind device_kind() const override { return DeviceKind::kCpu; }
  ImplementationTraits traits() const override { return {.deterministic = true}; }
  Status Applicable(const Workload&, const Target&) const override { return absl::OkStatus(); }
};

class ReduceCpuSequential : public ReduceCpuBase {
 public:
  std::string_view name() const override { return "reduce_cpu_sequential"; }
  ConfigSpace Space(const Workload&, const Target&) const override { return Knobs<NoKnobs>().Space(); }
  Status Run(const RunArgs& a) const override { return PrepareAndRun(*this, a); }
  StatusOr<std::unique_ptr<Prepared>> Prepare(const Workload& w, const Config& c, const Target&) const override {
    OPSCHED_RETURN_IF_ERROR(Knobs<NoKnobs>().Parse(c).status());
    return MakePrepared(0, [base = MakeProblem(w)](const PreparedArgs& a) { return Reduce(Bind(base, a)); });
  }

 private:
  static Status Reduce(const Problem& p) {
    cpu::VisitTypes(p, [&]<typename In, typename Out>() {
      const auto* x = static_cast<const typename In::Storage*>(p.x);
      auto* y = static_cast<typename Out::Storage*>(p.y);
      for (int64_t m = 0; m < p.outputs; ++m) {
        y[m] = Output<Out>(p, cpu::Accumulate<In>(p, x, cpu::KeptOffset(p, m), 0, p.length));
      }
    });
    return absl::OkStatus();
  }
};

class ReduceCpuParallel : public ReduceCpuBase {
 public:
  std::string_view name() const override { return "reduce_cpu_parallel"; }
  // `chunk`: terms per piece of work.
  static Knobs<CpuKnobs> KnobsOf(const Target& target) { return CpuChunkKnobs(target, {1024, 16384, 262144}, 16384); }
  ConfigSpace Space(const Workload&, const Target& target) const override { return KnobsOf(target).Space(); }
  Status Run(const RunArgs& a) const override { return PrepareAndRun(*this, a); }
  StatusOr<std::unique_ptr<Prepared>> Prepare(const Workload& w, const Config& c, const Target& target) const override {
    OPSCHED_ASSIGN_OR_RETURN(const CpuKnobs knobs, KnobsOf(target).Parse(c));
    const int threads = knobs.threads;
    const int64_t chunk = std::max<int64_t>(knobs.chunk, 1);
    return MakePrepared(0, [base = MakeProblem(w), threads, chunk](const PreparedArgs& a) {
      return Reduce(Bind(base, a), threads, chunk);
    });
  }

 private:
  static Status Reduce(const Problem& p, int threads, int64_t chunk) {
    cpu::VisitTypes(p, [&]<typename In, typename Out>() {
      const auto* x = static_cast<const typename In::Storage*>(p.x);
      auto* y = static_cast<typename Out::Storage*>(p.y);
      if (p.outputs >= threads || p.length <= chunk) {
        // Outputs in blocks of about `chunk` terms.
        const int64_t per = std::max<int64_t>(1, chunk / std::max<int64_t>(p.length, 1));
#pragma omp parallel for num_threads(threads) schedule(dynamic, 1)
        for (int64_t m0 = 0; m0 < p.outputs; m0 += per) {
          for (int64_t m = m0; m < std::min(p.outputs, m0 + per); ++m) {
            y[m] = Output<Out>(p, cpu::Accumulate<In>(p, x, cpu::KeptOffset(p, m), 0, p.length));
          }
        }
        return;
      }
      // Few long outputs: chunks of terms, partials combined in order.
      const int64_t chunks = (p.length + chunk - 1) / chunk;
      using A = AccumulatorOf<In>;
      std::vector<A> partial(chunks);
      for (int64_t m = 0; m < p.outputs; ++m) {
        const int64_t base = cpu::KeptOffset(p, m);
#pragma omp parallel for num_threads(threads) schedule(static)
        for (int64_t c = 0; c < chunks; ++c) {
          partial[c] = cpu::Accumulate<In>(p, x, base, c * chunk, std::min(p.length, (c + 1) * chunk));
        }
        A acc = IdentityOf<A>(p.op);
        for (A v : partial) acc = Combine(p.op, acc, v);
        y[m] = Output<Out>(p, acc);
      }
    });
    return absl::OkStatus();
  }
};

}  // namespace

Status RegisterCpu(Registry& registry) {
  OPSCHED_RETURN_IF_ERROR(registry.AddImplementation(std::make_unique<ReduceCpuSequential>()));
  OPSCHED_RETURN_IF_ERROR(registry.AddImplementation(std::make_unique<ReduceCpuParallel>()));
  return absl::OkStatus();
}

}  // namespace opsched::reduce
