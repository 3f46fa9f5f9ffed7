// Scatter on the CPU: a row-major sequential loop, and a loop parallel over the slices
// that no two positions of different slices can share (every dimension but the axis).
// Both validate every index before writing and are deterministic: updates to one
// element are applied in row-major order of indices.
#include <omp.h>

#include <algorithm>
#include <thread>

#include "core/format.h"
#include "ops/scatter/scatter_cpu_kernels.h"
#include "ops/scatter/scatter_def.h"
#include "ops/scatter/scatter_register.h"
#include "registry/cpu_knobs.h"
#include "registry/registry.h"

namespace opsched::scatter {
namespace {

// The problem parsed once, in Prepare, with one call's tensors bound.
Params Bind(Params p, const PreparedArgs& a) {
  p.data = a.tensors[0].data;
  p.indices = a.tensors[1].data;
  p.updates = a.tensors[2].data;
  p.out = a.tensors[3].data;
  p.in_place = a.tensors[3].data == a.tensors[0].data;
  return p;
}

class ScatterCpuBase : public Implementation {
 public:
  std::string_view op() const override { return "scatter"; }
  DeviceKind device_kind() const override { return DeviceKind::kCpu; }
  ImplementationTraits traits() const override {
    return {.deterministic = true, .vendor_library = false, .in_place = true};
  }
  Status Applicable(const Workload&, const Target&) const override { return absl::OkStatus(); }
};

class ScatterCpuSequential : public ScatterCpuBase {
 public:
  std::string_view name() const override { return "scatter_cpu_sequential"; }
  ConfigSpace Space(const Workload&, const Target&) const override { return Knobs<NoKnobs>().Space(); }
  Status Run(const RunArgs& a) const override { return PrepareAndRun(*this, a); }
  StatusOr<std::unique_ptr<Prepared>> Prepare(const Workload& w, const Config& c, const Target&) const override {
    OPSCHED_RETURN_IF_ERROR(Knobs<NoKnobs>().Parse(c).status());
    return MakePrepared(0, [w, base = MakeParams(w)](const PreparedArgs& a) { return Scatter(w, Bind(base, a)); });
  }

 private:
  static Status Scatter(const Workload& w, const Params& p) {
    Status status;
    cpu::VisitTypes(p, [&]<typename T, typename I>() {
      int64_t value = 0;
      const int64_t bad = cpu::FirstBadIndex<I>(p, 0, p.n, &value);
      if (bad >= 0) {
        status = OutOfRangeError(w, bad, value);
        return;
      }
      if (!p.in_place) cpu::CopyRange<T>(p, 0, p.data_n);
      // Row-major over every position: an odometer over the indices shape.
      using S = typename T::Storage;
      const I* indices = static_cast<const I*>(p.indices);
      const S* updates = static_cast<const S*>(p.updates);
      S* out = static_cast<S*>(p.out);
      int64_t coord[kMaxRank] = {};
      for (int64_t pos = 0; pos < p.n; ++pos) {
        int64_t io = 0, uo = 0, oo = 0;
        for (int d = 0; d < p.rank; ++d) {
          io += coord[d] * p.index_strides[d];
          uo += coord[d] * p.update_strides[d];
          if (d != p.axis) oo += coord[d] * p.out_strides[d];
        }
        int64_t index = static_cast<int64_t>(indices[io]);
        if (index < 0) index += p.axis_size;
        S& dst = out[oo + index * p.out_strides[p.axis]];
        dst = T::Store(cpu::Combine(p.reduction, T::Load(dst), T::Load(updates[uo])));
        for (int d = p.rank - 1; d >= 0 && ++coord[d] == p.shape[d]; --d) coord[d] = 0;
      }
    });
    return status;
  }
};

class ScatterCpuParallel : public ScatterCpuBase {
 public:
  // `chunk`: updates per piece of work.
  static Knobs<CpuKnobs> KnobsOf(const Target& target) { return CpuChunkKnobs(target, {1, 16, 256, 4096}, 256); }

  std::string_view name() const override { return "scatter_cpu_parallel"; }

  ConfigSpace Space(const Workload&, const Target& target) const override { return KnobsOf(target).Space(); }

  Status Run(const RunArgs& a) const override { return PrepareAndRun(*this, a); }
  StatusOr<std::unique_ptr<Prepared>> Prepare(const Workload& w, const Config& c, const Target& target) const override {
    OPSCHED_ASSIGN_OR_RETURN(const CpuKnobs knobs, KnobsOf(target).Parse(c));
    const int threads = knobs.threads;
    const int64_t chunk = std::max<int64_t>(knobs.chunk, 1);
    return MakePrepared(0, [w, base = MakeParams(w), threads, chunk](const PreparedArgs& a) {
      return Scatter(w, Bind(base, a), threads, chunk);
    });
  }

 private:
  static Status Scatter(const Workload& w, const Params& p, int threads, int64_t chunk) {
    const int64_t slices = p.index_axis == 0 ? 0 : p.n / p.index_axis;
    Status status;
    cpu::VisitTypes(p, [&]<typename T, typename I>() {
      // Validate everything first: the smallest bad position over all threads.
      const int64_t blocks = (p.n + chunk - 1) / chunk;
      int64_t first_bad = -1, bad_value = 0;
#pragma omp parallel for num_threads(threads) schedule(dynamic, 1)
      for (int64_t b = 0; b < blocks; ++b) {
        int64_t value = 0;
        const int64_t bad = cpu::FirstBadIndex<I>(p, b * chunk, std::min(p.n, (b + 1) * chunk), &value);
        if (bad >= 0) {
#pragma omp critical
          if (first_bad < 0 || bad < first_bad) {
            first_bad = bad;
            bad_value = value;
          }
        }
      }
      if (first_bad >= 0) {
        status = OutOfRangeError(w, first_bad, bad_value);
        return;
      }
      if (!p.in_place) {
        const int64_t copy_chunk = std::max<int64_t>(chunk, 4096);
        const int64_t copies = (p.data_n + copy_chunk - 1) / copy_chunk;
#pragma omp parallel for num_threads(threads) schedule(static)
        for (int64_t b = 0; b < copies; ++b) {
          cpu::CopyRange<T>(p, b * copy_chunk, std::min(p.data_n, (b + 1) * copy_chunk));
        }
      }
#pragma omp parallel for num_threads(threads) schedule(dynamic, 1)
      for (int64_t s = 0; s < slices; s += chunk) {
        cpu::ScatterSlices<T, I>(p, s, std::min(slices, s + chunk));
      }
    });
    return status;
  }
};

}  // namespace

Status RegisterCpu(Registry& registry) {
  OPSCHED_RETURN_IF_ERROR(registry.AddImplementation(std::make_unique<ScatterCpuSequential>()));
  OPSCHED_RETURN_IF_ERROR(registry.AddImplementation(std::make_unique<ScatterCpuParallel>()));
  return absl::OkStatus();
}

}  // namespace opsched::scatter
