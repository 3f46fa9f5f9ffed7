// The GPU reduce implementations: own row and column kernels (CUDA and HIP), and the CUB
// externs; applicability, config spaces and launches.
#include <functional>
#include <memory>
#include <optional>

#include "core/format.h"
#include "core/gpu/gpu_status.h"
#include "ops/reduce/reduce_cuda.h"
#include "ops/reduce/reduce_def.h"
#include "ops/reduce/reduce_register.h"
#include "registry/knobs.h"
#include "registry/registry.h"

namespace opsched::reduce {
namespace {

namespace k = gpu_kernels;

// The prepared problem with the call's tensors bound.
Problem Bind(Problem p, const PreparedArgs& a) {
  p.x = a.tensors[0].data;
  p.y = a.tensors[1].data;
  return p;
}

gpuStream_t StreamOf(const PreparedArgs& a) { return static_cast<gpuStream_t>(a.stream.native()); }

std::vector<int64_t> Powers(int64_t from, int64_t to) {
  std::vector<int64_t> v;
  for (int64_t x = from; x <= to; x *= 2) v.push_back(x);
  return v;
}

// The column kernels' thread block (block_x outputs by block_y terms), vector width and
// split, declared into a knob struct with those fields.
template <typename T>
void DeclareColumns(Knobs<T>& knobs, std::vector<int64_t> block_x, std::vector<int64_t> block_y,
                    std::vector<int64_t> split, std::vector<int64_t> vector = {1, 2, 4}) {
  knobs.Int("block_x", &T::block_x, std::move(block_x))
      .Int("block_y", &T::block_y, std::move(block_y))
      .Int("vector", &T::vector, std::move(vector))
      .Int("split", &T::split, std::move(split))
      .Constrain("64 <= block_x * block_y <= 1024", [](const T& c) {
        const int64_t threads = int64_t(c.block_x) * c.block_y;
        return threads >= 64 && threads <= 1024;
      });
}

// The float-only kernels' inputs (the row and column kernels take integers too).
Status FloatInput(const Problem& p) {
  if (IsIntegerElement(p.in_type)) {
    return absl::InvalidArgumentError(
        "serves f32, f16 and bf16 (reduce_cuda_rows and reduce_cuda_columns serve i32 and i64)");
  }
  return absl::OkStatus();
}

Status FitsOwnKernels(const Problem& p) {
  if (p.outputs > k::kMaxExtent || p.length > k::kMaxExtent) {
    return absl::InvalidArgumentError(fmt::format(
        "{} outputs of {} terms: own kernels index outputs and terms in 31 bits", p.outputs, p.length));
  }
  return absl::OkStatus();
}

// A kernel's grid, nullopt when it launches nothing.
std::optional<LaunchShape> ShapeOrNone(const LaunchShape& s) {
  return s.blocks > 0 ? std::optional<LaunchShape>(s) : std::nullopt;
}

// What the GPU reductions share: Prepare parses the workload's problem and the config's
// knobs once (MakeLauncher); each call binds the tensors and launches.
class ReduceGpu : public Implementation {
 public:
  std::string_view op() const override { return "reduce"; }
  DeviceKind device_kind() const override { return DeviceKind::kCuda; }
  StatusOr<std::unique_ptr<Prepared>> Prepare(const Workload& w, const Config& config,
                                              const Target& target) const override {
    OPSCHED_ASSIGN_OR_RETURN(Launch launch, MakeLauncher(w, config, target));
    return MakePrepared(launch.workspace_bytes,
                        [this, p = MakeProblem(w), launch = std::move(launch.call)](const PreparedArgs& a) {
                          return gpu::ToStatus(launch(Bind(p, a), a), "launch", name());
                        });
  }
  Status Run(const RunArgs& a) const override { return PrepareAndRun(*this, a); }

 protected:
  // Launches the kernels for the bound problem, with the workspace they need.
  using Launcher = std::function<gpuError_t(const Problem& p, const PreparedArgs& a)>;
  struct Launch {
    Launcher call;
    size_t workspace_bytes = 0;
  };
  // This implementation's launch with `config`'s knobs parsed (an error for a config its
  // knobs do not declare).
  virtual StatusOr<Launch> MakeLauncher(const Workload& w, const Config& config, const Target& target) const = 0;
  // The workspace of `config` for `w`, through the same parse; 0 for a config that does
  // not parse (Prepare reports it).
  size_t WorkspaceOf(const Workload& w, const Config& config) const {
    StatusOr<Launch> launch = MakeLauncher(w, config, Target{});
    return launch.ok() ? launch->workspace_bytes : 0;
  }
};

class ReduceCudaRows : public ReduceGpu {
 public:
  std::string_view name() const override { return "reduce_cuda_rows"; }
  ImplementationTraits traits() const override { return {.deterministic = true}; }
  Status Applicable(const Workload& w, const Target&) const override {
    const Problem p = MakeProblem(w);
    if (!p.rows && p.length > 1) {
      return absl::InvalidArgumentError("needs the innermost reduced dimension contiguous (stride 1)");
    }
    return FitsOwnKernels(p);
  }
  ConfigSpace Space(const Workload& w, const Target&) const override { return KnobsOf(w).Space(); }
  size_t WorkspaceBytes(const Workload& w, const Config& c) const override { return WorkspaceOf(w, c); }
  StatusOr<Launch> MakeLauncher(const Workload& w, const Config& config, const Target&) const override {
    OPSCHED_ASSIGN_OR_RETURN(const k::RowsConfig c, KnobsOf(w).Parse(config));
    return Launch{[c](const Problem& bound, const PreparedArgs& a) {
      Problem p = bound;
      if (!p.rows) {  // one term per output: a row of length 1
        p.rows = true;
        p.row = 1;
        p.reduced_rank = 1;
        p.reduced_shape[0] = 1;
        p.reduced_strides[0] = 1;
      }
      return k::LaunchRows(p, c, a.workspace, StreamOf(a));
    }, k::SplitWorkspaceBytes(MakeProblem(w), c.split)};
  }
  std::optional<LaunchShape> MainLaunch(const Workload& w, const Config& config, const Target&) const override {
    StatusOr<k::RowsConfig> c = KnobsOf(w).Parse(config);
    if (!c.ok()) return std::nullopt;
    return ShapeOrNone(k::RowsLaunch(MakeProblem(w), *c));
  }

 private:
  // `group` threads per row (a block when group > 32), `vector` elements per load,
  // `split` parts per row combined in order.
  static Knobs<k::RowsConfig> KnobsOf(const Workload& w) {
    using C = k::RowsConfig;
    const Problem p = MakeProblem(w);
    const int64_t outputs = p.outputs;
    const int64_t length = std::max<int64_t>(p.length, 1);
    Knobs<C> knobs;
    knobs.Int("group", &C::group, {4, 8, 16, 32, 64, 128, 256, 512, 1024})
        .Int("block", &C::block, {128, 256, 512})
        .Int("vector", &C::vector, {1, 2, 4, 8})
        .Int("split", &C::split, Powers(1, 2048))
        .Constrain("block is the group when group > 32", [](const C& c) { return c.group <= 32 || c.block == 256; })
        .Constrain("vector elements stay inside rows, aligned, <= 16 bytes",
                   [p](const C& c) { return k::RowsVectorFits(p, c.vector); })
        .Constrain("every split part has a load per thread",
                   [length](const C& c) { return c.split == 1 || int64_t(c.split) * c.group * c.vector <= length; })
        .Constrain("outputs * split < 2^31", [outputs](const C& c) { return outputs * c.split < k::kMaxExtent; });
    return knobs;
  }
};

class ReduceCudaColumns : public ReduceGpu {
 public:
  std::string_view name() const override { return "reduce_cuda_columns"; }
  ImplementationTraits traits() const override { return {.deterministic = true}; }
  Status Applicable(const Workload& w, const Target&) const override {
    // Any layout and element type: vector loads need the innermost kept dimension contiguous.
    return FitsOwnKernels(MakeProblem(w));
  }
  ConfigSpace Space(const Workload& w, const Target&) const override { return KnobsOf(w).Space(); }
  size_t WorkspaceBytes(const Workload& w, const Config& c) const override { return WorkspaceOf(w, c); }
  StatusOr<Launch> MakeLauncher(const Workload& w, const Config& config, const Target&) const override {
    OPSCHED_ASSIGN_OR_RETURN(const k::ColumnsConfig c, KnobsOf(w).Parse(config));
    return Launch{[c](const Problem& p, const PreparedArgs& a) { return k::LaunchColumns(p, c, a.workspace, StreamOf(a)); },
                  k::SplitWorkspaceBytes(MakeProblem(w), c.split)};
  }
  std::optional<LaunchShape> MainLaunch(const Workload& w, const Config& config, const Target&) const override {
    StatusOr<k::ColumnsConfig> c = KnobsOf(w).Parse(config);
    if (!c.ok()) return std::nullopt;
    return ShapeOrNone(k::ColumnsLaunch(MakeProblem(w), *c));
  }

 private:
  // block_x threads over neighbouring outputs (`vector` each), block_y over terms,
  // `split` parts combined in order.
  static Knobs<k::ColumnsConfig> KnobsOf(const Workload& w) {
    using C = k::ColumnsConfig;
    const Problem p = MakeProblem(w);
    const int64_t length = std::max<int64_t>(p.length, 1);
    Knobs<C> knobs;
    DeclareColumns(knobs, {8, 16, 32, 64, 128, 256}, {1, 2, 4, 8, 16, 32}, Powers(1, 1024), {1, 2, 4, 8});
    knobs.Constrain("vector outputs stay inside the contiguous run, aligned",
                    [p](const C& c) { return k::ColumnsVectorFits(p, c.vector); })
        .Constrain("every split part has a term per thread row",
                   [length](const C& c) { return c.split == 1 || int64_t(c.split) * c.block_y <= length; });
    return knobs;
  }
};

class ReduceCudaStaged : public ReduceGpu {
 public:
  std::string_view name() const override { return "reduce_cuda_staged"; }
  ImplementationTraits traits() const override { return {.deterministic = true}; }
  Status Applicable(const Workload& w, const Target&) const override {
    const Problem p = MakeProblem(w);
    OPSCHED_RETURN_IF_ERROR(FloatInput(p));
    if (!k::StagedApplies(p)) {
      return absl::InvalidArgumentError(
          "needs several contiguous runs per output (a reduced dimension outside the innermost, contiguous one) "
          "and fewer than 2^31 intermediate values");
    }
    return absl::OkStatus();
  }
  ConfigSpace Space(const Workload& w, const Target&) const override { return KnobsOf(w).Space(); }
  size_t WorkspaceBytes(const Workload& w, const Config& c) const override { return WorkspaceOf(w, c); }
  StatusOr<Launch> MakeLauncher(const Workload& w, const Config& config, const Target&) const override {
    OPSCHED_ASSIGN_OR_RETURN(const StagedKnobs c, KnobsOf(w).Parse(config));
    const k::ColumnsConfig first{c.block_x, c.block_y, c.vector, c.split};
    return Launch{[first, group = c.group](const Problem& p, const PreparedArgs& a) {
                    return k::LaunchStaged(p, first, group, a.workspace, StreamOf(a));
                  },
                  k::StagedWorkspaceBytes(MakeProblem(w), c.split)};
  }
  std::optional<LaunchShape> MainLaunch(const Workload& w, const Config& config, const Target&) const override {
    StatusOr<StagedKnobs> c = KnobsOf(w).Parse(config);
    if (!c.ok()) return std::nullopt;
    return ShapeOrNone(k::StagedLaunch(MakeProblem(w), k::ColumnsConfig{c->block_x, c->block_y, c->vector, c->split}));
  }

 private:
  // The first stage as reduce_cuda_columns over the contiguous runs, then `group` threads
  // per output over its runs' partials.
  struct StagedKnobs {
    int block_x = 32;
    int block_y = 8;
    int vector = 4;
    int split = 1;
    int group = 16;
  };
  static Knobs<StagedKnobs> KnobsOf(const Workload& w) {
    const Problem p = MakeProblem(w);
    const int64_t runs = p.row > 0 ? p.length / p.row : 0;
    Knobs<StagedKnobs> knobs;
    DeclareColumns(knobs, {32, 64, 128, 256}, {1, 2, 4, 8}, Powers(1, 64));
    knobs.Int("group", &StagedKnobs::group, {4, 8, 16, 32})
        .Constrain("vector loads stay inside the first stage's contiguous outputs, aligned",
                   [p](const StagedKnobs& c) { return k::StagedVectorFits(p, c.vector); })
        .Constrain("every split part has a run per thread row",
                   [runs](const StagedKnobs& c) { return c.split == 1 || int64_t(c.split) * c.block_y <= runs; });
    return knobs;
  }
};

// segmented: DeviceSegmentedReduce over contiguous rows; else DeviceReduce into one
// output.
class ReduceCub : public ReduceGpu {
 public:
  explicit ReduceCub(bool segmented) : segmented_(segmented) {}
  std::string_view name() const override { return segmented_ ? "reduce_cub_segmented" : "reduce_cub"; }
  ImplementationTraits traits() const override {
    return {.deterministic = true, .vendor_library = true};  // CUB's reductions are run-to-run deterministic
  }
  Status Applicable(const Workload& w, const Target&) const override {
    const Problem p = MakeProblem(w);
    OPSCHED_RETURN_IF_ERROR(FloatInput(p));
    if (p.length == 0 || p.outputs == 0) return absl::InvalidArgumentError("needs a non-empty reduction");
    const bool one_run = p.reduced_rank == 1 && p.rows;
    if (!segmented_) {
      if (p.outputs != 1 || !one_run) {
        return absl::InvalidArgumentError("reduces a contiguous x into one output");
      }
    } else if (!one_run || p.kept_rank > 1 || (p.kept_rank == 1 && p.kept_strides[0] != p.row)) {
      return absl::InvalidArgumentError("needs one contiguous row per output, rows back to back");
    }
    return absl::OkStatus();
  }
  ConfigSpace Space(const Workload&, const Target&) const override { return Knobs<NoKnobs>().Space(); }
  size_t WorkspaceBytes(const Workload& w, const Config&) const override {
    return k::CubWorkspaceBytes(MakeProblem(w), segmented_);
  }
  StatusOr<Launch> MakeLauncher(const Workload& w, const Config& config, const Target&) const override {
    OPSCHED_RETURN_IF_ERROR(Knobs<NoKnobs>().Parse(config).status());
    return Launch{[segmented = segmented_](const Problem& p, const PreparedArgs& a) {
                    return k::LaunchCub(p, segmented, a.workspace, a.workspace_bytes, StreamOf(a));
                  },
                  k::CubWorkspaceBytes(MakeProblem(w), segmented_)};
  }

 private:
  bool segmented_;
};

// Integers: `group` threads per output over its terms in int64 (reduce_math.h).
class ReduceCudaInteger : public ReduceGpu {
 public:
  std::string_view name() const override { return "reduce_cuda_integer"; }
  ImplementationTraits traits() const override { return {.deterministic = true}; }
  Status Applicable(const Workload& w, const Target&) const override {
    const Problem p = MakeProblem(w);
    if (!IsIntegerElement(p.in_type)) return absl::InvalidArgumentError("serves i32 and i64");
    return FitsOwnKernels(p);
  }
  ConfigSpace Space(const Workload& w, const Target& t) const override { return KnobsOf(w, t).Space(); }
  size_t WorkspaceBytes(const Workload& w, const Config& c) const override { return WorkspaceOf(w, c); }
  StatusOr<Launch> MakeLauncher(const Workload& w, const Config& config, const Target& t) const override {
    OPSCHED_ASSIGN_OR_RETURN(k::IntegerConfig c, KnobsOf(w, t).Parse(config));
    if (c.group > 32) c.block = c.group;
    return Launch{[c](const Problem& p, const PreparedArgs& a) { return k::LaunchInteger(p, c, a.workspace, StreamOf(a)); },
                  k::SplitWorkspaceBytes(MakeProblem(w), c.split)};
  }

 private:
  static Knobs<k::IntegerConfig> KnobsOf(const Workload& w, const Target& t) {
    using C = k::IntegerConfig;
    const Problem p = MakeProblem(w);
    const int64_t length = std::max<int64_t>(p.length, 1);
    const int64_t outputs = std::max<int64_t>(p.outputs, 1);
    // Preferred: columns where neighbouring outputs are neighbours in x and the terms are
    // not; a warp per output on rows, a block on few long ones; parts enough to fill the
    // GPU (about 2048 threads per multiprocessor), each of at least 16 terms per thread.
    const bool columns = p.columns && !p.rows;
    const int64_t group = columns ? 8 : (outputs < 4 * std::max(t.sm_count, 1) && length >= 4096 ? 1024 : 32);
    int64_t split = 1;
    const int64_t want_threads = int64_t(std::max(t.sm_count, 1)) * 2048;
    while (split < 1024 && outputs * group * split < want_threads && length / (group * split * 2) >= 16) split *= 2;
    Knobs<C> knobs(C{static_cast<int>(group), 256, columns, static_cast<int>(split)});
    knobs.Int("group", &C::group, {1, 4, 8, 32, 256, 1024})
        .Int("block", &C::block, {128, 256, 512})
        .Int("columns", &C::columns, {0, 1})
        .Int("split", &C::split, Powers(1, 1024))
        .Constrain("block is the group when group > 32", [](const C& c) { return c.group <= 32 || c.block == 256; })
        .Constrain("columns: several outputs per block, group <= 32", [](const C& c) { return !c.columns || c.group <= 32; })
        .Constrain("every split part has a term per thread",
                   [length](const C& c) { return c.split == 1 || int64_t(c.split) * c.group <= length; })
        .Constrain("outputs * split < 2^31", [outputs](const C& c) { return outputs * c.split < k::kMaxExtent; });
    return knobs;
  }
};

}  // namespace

Status RegisterCudaImpls(Registry& registry) {
  OPSCHED_RETURN_IF_ERROR(registry.AddImplementation(std::make_unique<ReduceCudaRows>()));
  OPSCHED_RETURN_IF_ERROR(registry.AddImplementation(std::make_unique<ReduceCudaColumns>()));
  OPSCHED_RETURN_IF_ERROR(registry.AddImplementation(std::make_unique<ReduceCudaStaged>()));
  OPSCHED_RETURN_IF_ERROR(registry.AddImplementation(std::make_unique<ReduceCudaInteger>()));
  OPSCHED_RETURN_IF_ERROR(registry.AddImplementation(std::make_unique<ReduceCub>(false)));
  OPSCHED_RETURN_IF_ERROR(registry.AddImplementation(std::make_unique<ReduceCub>(true)));
  return absl::OkStatus();
}

}  // namespace opsched::reduce
