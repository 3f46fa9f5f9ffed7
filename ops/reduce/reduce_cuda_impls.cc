// The GPU reduce implementations: own row and column kernels (CUDA and HIP), and the CUB
// externs; applicability, config spaces and launches.
#include <functional>
#include <memory>

#include "core/format.h"
#include "core/gpu/gpu_status.h"
#include "ops/reduce/reduce_cuda.h"
#include "ops/reduce/reduce_def.h"
#include "ops/reduce/reduce_register.h"
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

int Int(const Config& c, const char* name, int fallback) { return static_cast<int>(c.GetInt(name, fallback)); }

std::vector<int64_t> Powers(int64_t from, int64_t to) {
  std::vector<int64_t> v;
  for (int64_t x = from; x <= to; x *= 2) v.push_back(x);
  return v;
}

// The float kernels' inputs (integers go to reduce_cuda_integer).
Status FloatInput(const Problem& p) {
  if (IsIntegerElement(p.in_type)) {
    return absl::InvalidArgumentError("serves f32, f16 and bf16 (reduce_cuda_integer serves i32 and i64)");
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

// What the GPU reductions share: Prepare parses the workload's problem and the config's
// knobs once (MakeLauncher); each call binds the tensors and launches.
class ReduceGpu : public Implementation {
 public:
  std::string_view op() const override { return "reduce"; }
  DeviceKind device_kind() const override { return DeviceKind::kCuda; }
  StatusOr<std::unique_ptr<Prepared>> Prepare(const Workload& w, const Config& config, const Target&) const override {
    return MakePrepared(WorkspaceBytes(w, config),
                        [this, p = MakeProblem(w), launch = MakeLauncher(w, config)](const PreparedArgs& a) {
                          return gpu::ToStatus(launch(Bind(p, a), a), "launch", name());
                        });
  }
  Status Run(const RunArgs& a) const override { return PrepareAndRun(*this, a); }

 protected:
  // Launches the kernels for the bound problem.
  using Launcher = std::function<gpuError_t(const Problem& p, const PreparedArgs& a)>;
  // This implementation's launch with `config`'s knobs read.
  virtual Launcher MakeLauncher(const Workload& w, const Config& config) const = 0;
};

class ReduceCudaRows : public ReduceGpu {
 public:
  std::string_view name() const override { return "reduce_cuda_rows"; }
  ImplementationTraits traits() const override { return {.deterministic = true}; }
  Status Applicable(const Workload& w, const Target&) const override {
    const Problem p = MakeProblem(w);
    OPSCHED_RETURN_IF_ERROR(FloatInput(p));
    if (!p.rows && p.length > 1) {
      return absl::InvalidArgumentError("needs the innermost reduced dimension contiguous (stride 1)");
    }
    return FitsOwnKernels(p);
  }
  ConfigSpace Space(const Workload& w, const Target&) const override {
    const Problem p = MakeProblem(w);
    const int64_t outputs = p.outputs;
    const int64_t length = std::max<int64_t>(p.length, 1);
    return ConfigSpace()
        .AddInts("group", {4, 8, 16, 32, 64, 128, 256, 512, 1024})
        .AddInts("block", {128, 256, 512})
        .AddInts("vector", {1, 2, 4, 8})
        .AddInts("split", Powers(1, 2048))
        .Constrain("block is the group when group > 32",
                   [](const Config& c) { return c.GetInt("group", 0) <= 32 || c.GetInt("block", 0) == 256; })
        .Constrain("vector elements stay inside rows, aligned, <= 16 bytes",
                   [p](const Config& c) { return k::RowsVectorFits(p, Int(c, "vector", 1)); })
        .Constrain("every split part has a load per thread",
                   [length](const Config& c) {
                     return c.GetInt("split", 1) == 1 ||
                            c.GetInt("split", 1) * c.GetInt("group", 1) * c.GetInt("vector", 1) <= length;
                   })
        .Constrain("outputs * split < 2^31",
                   [outputs](const Config& c) { return outputs * c.GetInt("split", 1) < k::kMaxExtent; });
  }
  size_t WorkspaceBytes(const Workload& w, const Config& c) const override {
    return k::SplitWorkspaceBytes(MakeProblem(w), Int(c, "split", 1));
  }
  Launcher MakeLauncher(const Workload&, const Config& config) const override {
    const k::RowsConfig c{Int(config, "group", 32), Int(config, "block", 256), Int(config, "vector", 1),
                          Int(config, "split", 1)};
    return [c](const Problem& bound, const PreparedArgs& a) {
      Problem p = bound;
      if (!p.rows) {  // one term per output: a row of length 1
        p.rows = true;
        p.row = 1;
        p.reduced_rank = 1;
        p.reduced_shape[0] = 1;
        p.reduced_strides[0] = 1;
      }
      return k::LaunchRows(p, c, a.workspace, StreamOf(a));
    };
  }
};

class ReduceCudaColumns : public ReduceGpu {
 public:
  std::string_view name() const override { return "reduce_cuda_columns"; }
  ImplementationTraits traits() const override { return {.deterministic = true}; }
  Status Applicable(const Workload& w, const Target&) const override {
    // Any layout: vector loads need the innermost kept dimension contiguous.
    const Problem p = MakeProblem(w);
    OPSCHED_RETURN_IF_ERROR(FloatInput(p));
    return FitsOwnKernels(p);
  }
  ConfigSpace Space(const Workload& w, const Target&) const override {
    const Problem p = MakeProblem(w);
    const int64_t length = std::max<int64_t>(p.length, 1);
    return ConfigSpace()
        .AddInts("block_x", {8, 16, 32, 64, 128, 256})
        .AddInts("block_y", {1, 2, 4, 8, 16, 32})
        .AddInts("vector", {1, 2, 4})
        .AddInts("split", Powers(1, 1024))
        .Constrain("64 <= block_x * block_y <= 1024",
                   [](const Config& c) {
                     const int64_t t = c.GetInt("block_x", 0) * c.GetInt("block_y", 0);
                     return t >= 64 && t <= 1024;
                   })
        .Constrain("vector outputs stay inside the contiguous run, aligned",
                   [p](const Config& c) { return k::ColumnsVectorFits(p, Int(c, "vector", 1)); })
        .Constrain("every split part has a term per thread row",
                   [length](const Config& c) {
                     return c.GetInt("split", 1) == 1 || c.GetInt("split", 1) * c.GetInt("block_y", 1) <= length;
                   });
  }
  size_t WorkspaceBytes(const Workload& w, const Config& c) const override {
    return k::SplitWorkspaceBytes(MakeProblem(w), Int(c, "split", 1));
  }
  Launcher MakeLauncher(const Workload&, const Config& config) const override {
    const k::ColumnsConfig c{Int(config, "block_x", 32), Int(config, "block_y", 8), Int(config, "vector", 1),
                             Int(config, "split", 1)};
    return [c](const Problem& p, const PreparedArgs& a) { return k::LaunchColumns(p, c, a.workspace, StreamOf(a)); };
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
  ConfigSpace Space(const Workload& w, const Target&) const override {
    const Problem p = MakeProblem(w);
    const int64_t runs = p.row > 0 ? p.length / p.row : 0;
    return ConfigSpace()
        .AddInts("block_x", {32, 64, 128, 256})
        .AddInts("block_y", {1, 2, 4, 8})
        .AddInts("vector", {1, 2, 4})
        .AddInts("split", Powers(1, 64))
        .AddInts("group", {4, 8, 16, 32})
        .Constrain("64 <= block_x * block_y <= 1024",
                   [](const Config& c) {
                     const int64_t t = c.GetInt("block_x", 0) * c.GetInt("block_y", 0);
                     return t >= 64 && t <= 1024;
                   })
        .Constrain("vector loads stay inside the first stage's contiguous outputs, aligned",
                   [p](const Config& c) { return k::StagedVectorFits(p, Int(c, "vector", 1)); })
        .Constrain("every split part has a run per thread row",
                   [runs](const Config& c) {
                     return c.GetInt("split", 1) == 1 || c.GetInt("split", 1) * c.GetInt("block_y", 1) <= runs;
                   });
  }
  size_t WorkspaceBytes(const Workload& w, const Config& c) const override {
    return k::StagedWorkspaceBytes(MakeProblem(w), Int(c, "split", 1));
  }
  Launcher MakeLauncher(const Workload&, const Config& config) const override {
    const k::ColumnsConfig first{Int(config, "block_x", 32), Int(config, "block_y", 8), Int(config, "vector", 1),
                                 Int(config, "split", 1)};
    return [first, group = Int(config, "group", 16)](const Problem& p, const PreparedArgs& a) {
      return k::LaunchStaged(p, first, group, a.workspace, StreamOf(a));
    };
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
  ConfigSpace Space(const Workload&, const Target&) const override { return ConfigSpace(); }
  size_t WorkspaceBytes(const Workload& w, const Config&) const override {
    return k::CubWorkspaceBytes(MakeProblem(w), segmented_);
  }
  Launcher MakeLauncher(const Workload&, const Config&) const override {
    return [segmented = segmented_](const Problem& p, const PreparedArgs& a) {
      return k::LaunchCub(p, segmented, a.workspace, a.workspace_bytes, StreamOf(a));
    };
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
  ConfigSpace Space(const Workload& w, const Target& t) const override {
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
    return ConfigSpace()
        .AddInts("group", {1, 4, 8, 32, 256, 1024}, group)
        .AddInts("block", {128, 256, 512}, 256)
        .AddInts("columns", {0, 1}, columns ? 1 : 0)
        .AddInts("split", Powers(1, 1024), split)
        .Constrain("block is the group when group > 32",
                   [](const Config& c) { return c.GetInt("group", 0) <= 32 || c.GetInt("block", 0) == 256; })
        .Constrain("columns: several outputs per block, group <= 32",
                   [](const Config& c) { return c.GetInt("columns", 0) == 0 || c.GetInt("group", 0) <= 32; })
        .Constrain("every split part has a term per thread",
                   [length](const Config& c) {
                     return c.GetInt("split", 1) == 1 || c.GetInt("split", 1) * c.GetInt("group", 1) <= length;
                   })
        .Constrain("outputs * split < 2^31",
                   [outputs](const Config& c) { return outputs * c.GetInt("split", 1) < k::kMaxExtent; });
  }
  size_t WorkspaceBytes(const Workload& w, const Config& c) const override {
    return k::IntegerWorkspaceBytes(MakeProblem(w), Int(c, "split", 1));
  }
  Launcher MakeLauncher(const Workload&, const Config& config) const override {
    k::IntegerConfig c;
    c.group = Int(config, "group", 32);
    c.block = c.group > 32 ? c.group : Int(config, "block", 256);
    c.columns = Int(config, "columns", 0) != 0;
    c.split = Int(config, "split", 1);
    return [c](const Problem& p, const PreparedArgs& a) { return k::LaunchInteger(p, c, a.workspace, StreamOf(a)); };
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
