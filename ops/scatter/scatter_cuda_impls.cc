// The GPU scatter implementations: applicability, config spaces and launches.
#include <functional>
#include <memory>

#include "core/format.h"
#include "core/gpu/gpu_backend.h"
#include "core/gpu/gpu_status.h"
#include "ops/scatter/scatter_cuda.h"
#include "ops/scatter/scatter_def.h"
#include "ops/scatter/scatter_register.h"
#include "registry/knobs.h"
#include "registry/registry.h"

namespace opsched::scatter {
namespace {

namespace k = gpu_kernels;

// The prepared params with the call's tensors bound.
Params Bind(Params p, const PreparedArgs& a) {
  p.data = a.tensors[0].data;
  p.indices = a.tensors[1].data;
  p.updates = a.tensors[2].data;
  p.out = a.tensors[3].data;
  p.in_place = a.tensors[3].data == a.tensors[0].data;
  return p;
}

gpuStream_t StreamOf(const PreparedArgs& a) { return static_cast<gpuStream_t>(a.stream.native()); }

// The copy of data into out (out of place) that several scatters start with: its knobs.
template <typename T>
void DeclareCopy(Knobs<T>& knobs, std::vector<int64_t> blocks, std::vector<int64_t> vectors) {
  knobs.Int("copy_block", &T::copy_block, std::move(blocks)).Int("copy_vector", &T::copy_vector, std::move(vectors));
}
template <typename T>
k::CopyConfig CopyConfigOf(const T& knobs) {
  return k::CopyConfig{knobs.copy_block, knobs.copy_vector};
}

bool Deterministic(Reduction r) { return r == Reduction::kNone || r == Reduction::kMin || r == Reduction::kMax; }

// The kernels that pack a float's bits (keys, shared tiles, buckets) serve the float types
// only; integers go to the sequential, parallel, sorted and bucketed scatters (and integer
// adds along axis 0 of few rows to the columns one).
Status FloatData(const Params& p) {
  if (IsIntegerElement(p.type)) {
    return absl::InvalidArgumentError(
        "serves f32, f16 and bf16 data (scatter_cuda_parallel, _sequential, _sorted and _bucketed serve i32 and i64)");
  }
  return absl::OkStatus();
}

// What the GPU scatters share: Prepare parses the workload's params and the config's
// knobs once (MakeLauncher); each call binds the tensors and launches.
class ScatterGpu : public Implementation {
 public:
  std::string_view op() const override { return "scatter"; }
  DeviceKind device_kind() const override { return DeviceKind::kCuda; }
  bool ReportsDeviceErrors() const override { return true; }
  Status Applicable(const Workload&, const Target&) const override { return absl::OkStatus(); }
  StatusOr<std::unique_ptr<Prepared>> Prepare(const Workload& w, const Config& config, const Target&) const override {
    OPSCHED_ASSIGN_OR_RETURN(Launcher launch, MakeLauncher(w, config));
    return MakePrepared(WorkspaceBytes(w, config),
                        [this, p = MakeParams(w), launch = std::move(launch)](const PreparedArgs& a) {
                          return gpu::ToStatus(launch(Bind(p, a), a), "launch", name());
                        });
  }
  Status Run(const RunArgs& a) const override { return PrepareAndRun(*this, a); }

 protected:
  // Launches the kernels for the bound params.
  using Launcher = std::function<gpuError_t(const Params& p, const PreparedArgs& a)>;
  // This implementation's launch with `config`'s knobs parsed (an error for a config
  // its knobs do not declare).
  virtual StatusOr<Launcher> MakeLauncher(const Workload& w, const Config& config) const = 0;
};

class ScatterCudaSequential : public ScatterGpu {
 public:
  std::string_view name() const override { return "scatter_cuda_sequential"; }
  ImplementationTraits traits() const override { return {.deterministic = true, .in_place = true}; }
  Status Applicable(const Workload& w, const Target&) const override {
    const int64_t n = MakeParams(w).n;
    if (n > k::kSequentialMaxUpdates) {
      return absl::InvalidArgumentError(fmt::format(
          "one thread applies every update: {} updates exceed its limit of {}", n, k::kSequentialMaxUpdates));
    }
    return absl::OkStatus();
  }
  ConfigSpace Space(const Workload&, const Target&) const override { return KnobsOf().Space(); }
  StatusOr<Launcher> MakeLauncher(const Workload&, const Config& c) const override {
    OPSCHED_ASSIGN_OR_RETURN(const SequentialKnobs knobs, KnobsOf().Parse(c));
    return Launcher([fused = knobs.fused_copy, threads = knobs.threads](const Params& p, const PreparedArgs& a) {
      if (!fused && !p.in_place) {
        const gpuError_t copied = k::LaunchCopy(p, k::CopyConfig{}, StreamOf(a));
        if (copied != gpuSuccess) return copied;
      }
      return k::LaunchSequential(p, fused, threads, a.error_slot, StreamOf(a));
    });
  }

 private:
  // One thread applies the updates in order (`threads` share the fused copy).
  struct SequentialKnobs {
    int threads = 32;
    bool fused_copy = true;  // the copy of data into out in the same kernel
  };
  static Knobs<SequentialKnobs> KnobsOf() {
    Knobs<SequentialKnobs> knobs;
    knobs.Int("threads", &SequentialKnobs::threads, {32, 128, 512}).Int("fused_copy", &SequentialKnobs::fused_copy, {1, 0});
    return knobs;
  }
};

class ScatterCudaParallel : public ScatterGpu {
 public:
  std::string_view name() const override { return "scatter_cuda_parallel"; }
  ImplementationTraits traits() const override {
    // Atomic order varies between runs (float add), and with reduction none duplicate
    // targets keep an arbitrary one of their updates.
    return {.deterministic = false, .in_place = true};
  }
  ConfigSpace Space(const Workload& w, const Target&) const override { return KnobsOf(w).Space(); }
  size_t WorkspaceBytes(const Workload&, const Config&) const override { return k::kWordBytes; }
  StatusOr<Launcher> MakeLauncher(const Workload& w, const Config& c) const override {
    OPSCHED_ASSIGN_OR_RETURN(const ParallelKnobs knobs, KnobsOf(w).Parse(c));
    return Launcher([copy = CopyConfigOf(knobs), knobs](const Params& p, const PreparedArgs& a) {
      return k::LaunchParallel(p, copy, knobs.block, knobs.items, knobs.pairs, a.workspace, a.error_slot, StreamOf(a));
    });
  }

 private:
  struct ParallelKnobs {
    int block = 256;
    int items = 4;  // updates per thread
    int copy_block = 256;
    int copy_vector = 16;
    bool pairs = false;  // paired half2/bfloat162 atomics
  };
  // `pairs` is a knob (preferred on) only where f16/bf16 adds can take paired atomics.
  static Knobs<ParallelKnobs> KnobsOf(const Workload& w) {
    ParallelKnobs defaults;
    defaults.pairs = k::PairsFit(MakeParams(w));
    Knobs<ParallelKnobs> knobs(defaults);
    knobs.Int("block", &ParallelKnobs::block, {64, 128, 256, 512, 1024}).Int("items", &ParallelKnobs::items, {1, 2, 4, 8});
    DeclareCopy(knobs, {128, 256, 512, 1024}, {4, 8, 16});
    if (defaults.pairs) knobs.Int("pairs", &ParallelKnobs::pairs, {0, 1});
    return knobs;
  }
};

class ScatterCudaSorted : public ScatterGpu {
 public:
  std::string_view name() const override { return "scatter_cuda_sorted"; }
  ImplementationTraits traits() const override {
    return {.deterministic = true, .vendor_library = true, .in_place = true};
  }
  ConfigSpace Space(const Workload&, const Target&) const override { return KnobsOf().Space(); }
  size_t WorkspaceBytes(const Workload& w, const Config&) const override {
    return k::SortedWorkspaceBytes(MakeParams(w));
  }
  StatusOr<Launcher> MakeLauncher(const Workload&, const Config& c) const override {
    OPSCHED_ASSIGN_OR_RETURN(const SortedKnobs knobs, KnobsOf().Parse(c));
    return Launcher([copy = CopyConfigOf(knobs), block = knobs.block](const Params& p, const PreparedArgs& a) {
      return k::LaunchSorted(p, copy, block, a.workspace, a.workspace_bytes, a.error_slot, StreamOf(a));
    });
  }

 private:
  struct SortedKnobs {
    int block = 256;
    int copy_block = 256;
    int copy_vector = 16;
  };
  static Knobs<SortedKnobs> KnobsOf() {
    Knobs<SortedKnobs> knobs;
    knobs.Int("block", &SortedKnobs::block, {128, 256, 512});
    DeclareCopy(knobs, {256, 1024}, {16});
    return knobs;
  }
};

// Privatized: `deterministic` serves none/min/max (their results do not depend on the
// order of atomics), the atomic variant add/mul.
class ScatterCudaPrivatized : public ScatterGpu {
 public:
  explicit ScatterCudaPrivatized(bool deterministic) : deterministic_(deterministic) {}
  std::string_view name() const override {
    return deterministic_ ? "scatter_cuda_privatized" : "scatter_cuda_privatized_atomic";
  }
  ImplementationTraits traits() const override { return {.deterministic = deterministic_, .in_place = true}; }
  Status Applicable(const Workload& w, const Target&) const override {
    const Params p = MakeParams(w);
    OPSCHED_RETURN_IF_ERROR(FloatData(p));
    if (Deterministic(p.reduction) != deterministic_) {
      return absl::InvalidArgumentError(deterministic_ ? "serves reductions none, min and max"
                                                       : "serves reductions add and mul");
    }
    if (!p.fast) {
      return absl::InvalidArgumentError("needs contiguous tensors with indices shaped like data outside the axis");
    }
    const size_t shared = k::PrivatizedSharedBytes(p);
    if (shared > k::kPrivatizedMaxElements * sizeof(float)) {
      return absl::InvalidArgumentError(fmt::format(
          "out has {} elements; its shared-memory copy would take {} bytes, more than {}", p.data_n, shared,
          k::kPrivatizedMaxElements * sizeof(float)));
    }
    if (p.n >= (int64_t(1) << 32) - 1) return absl::InvalidArgumentError("positions must fit 32 bits");
    return absl::OkStatus();
  }
  ConfigSpace Space(const Workload& w, const Target&) const override { return KnobsOf(w).Space(); }
  size_t WorkspaceBytes(const Workload& w, const Config&) const override {
    return k::PrivatizedWorkspaceBytes(MakeParams(w));
  }
  StatusOr<Launcher> MakeLauncher(const Workload& w, const Config& c) const override {
    OPSCHED_ASSIGN_OR_RETURN(const PrivatizedKnobs knobs, KnobsOf(w).Parse(c));
    return Launcher([knobs](const Params& p, const PreparedArgs& a) {
      return k::LaunchPrivatized(p, knobs.block, knobs.blocks_per_sm, gpu::MultiprocessorCount(a.stream.device()),
                                 a.workspace, a.error_slot, StreamOf(a));
    });
  }

 private:
  struct PrivatizedKnobs {
    int block = 512;
    int blocks_per_sm = 2;  // resident blocks, each with its own shared copy of out
  };
  static Knobs<PrivatizedKnobs> KnobsOf(const Workload& w) {
    const int64_t shared = static_cast<int64_t>(k::PrivatizedSharedBytes(MakeParams(w)));
    Knobs<PrivatizedKnobs> knobs;
    knobs.Int("block", &PrivatizedKnobs::block, {256, 512, 1024})
        .Int("blocks_per_sm", &PrivatizedKnobs::blocks_per_sm, {1, 2, 4, 8})
        .Constrain("blocks_per_sm * shared bytes <= 224 KiB",
                   [shared](const PrivatizedKnobs& k) { return k.blocks_per_sm * shared <= 224 * 1024; });
    return knobs;
  }
  bool deterministic_;
};

// Slice-local tiles: `ordered` (deterministic) applies each column's updates in order,
// and for none/min/max also shares them with atomics; the atomic variant shares add/mul,
// and none with plain stores (any competing update wins).
class ScatterCudaSlice : public ScatterGpu {
 public:
  explicit ScatterCudaSlice(bool deterministic) : deterministic_(deterministic) {}
  std::string_view name() const override { return deterministic_ ? "scatter_cuda_slice" : "scatter_cuda_slice_atomic"; }
  ImplementationTraits traits() const override { return {.deterministic = deterministic_, .in_place = true}; }
  Status Applicable(const Workload& w, const Target& t) const override {
    const Params p = MakeParams(w);
    OPSCHED_RETURN_IF_ERROR(FloatData(p));
    if (!deterministic_ && Deterministic(p.reduction) && p.reduction != Reduction::kNone) {
      return absl::InvalidArgumentError("serves reductions none, add and mul (scatter_cuda_slice serves min and max)");
    }
    if (!p.fast) {
      return absl::InvalidArgumentError("needs contiguous tensors with indices shaped like data outside the axis");
    }
    if (Space(w, t).Enumerate(1).empty()) {
      return absl::InvalidArgumentError(fmt::format(
          "no tile of whole slices along the axis ({} elements each) fits {} KiB of shared memory", p.axis_size,
          k::kSliceMaxSharedBytes / 1024));
    }
    return absl::OkStatus();
  }
  ConfigSpace Space(const Workload& w, const Target&) const override { return KnobsOf(w).Space(); }
  size_t WorkspaceBytes(const Workload&, const Config&) const override { return k::kWordBytes; }
  StatusOr<Launcher> MakeLauncher(const Workload& w, const Config& c) const override {
    OPSCHED_ASSIGN_OR_RETURN(const SliceKnobs knobs, KnobsOf(w).Parse(c));
    const k::SliceConfig config{knobs.columns, knobs.threads > 0 ? knobs.threads : 32, knobs.threads == 0,
                                !deterministic_};
    return Launcher([config](const Params& p, const PreparedArgs& a) {
      return k::LaunchSlice(p, config, a.workspace, a.error_slot, StreamOf(a));
    });
  }

 private:
  struct SliceKnobs {
    int columns = 32;  // whole slices along the axis in a block's shared tile
    int threads = 0;   // 0: one thread per column, applying its updates in order
  };
  Knobs<SliceKnobs> KnobsOf(const Workload& w) const {
    const Params p = MakeParams(w);
    const bool any_winner = !deterministic_;
    std::vector<int64_t> columns;
    for (int64_t c = 1; c <= 1024; c *= 2) {
      if (k::SliceSharedBytes(p, static_cast<int>(c), any_winner) > 0) columns.push_back(c);
    }
    for (int64_t m = 1; p.inner > 1 && p.inner * m <= 1024; m *= 2) {
      const int64_t c = p.inner * m;
      if ((c & (c - 1)) != 0 && k::SliceSharedBytes(p, static_cast<int>(c), any_winner) > 0) columns.push_back(c);
    }
    std::sort(columns.begin(), columns.end());
    // threads 0: one thread per column, in order.
    std::vector<int64_t> threads = deterministic_ ? std::vector<int64_t>{0, 128, 256, 512, 1024}
                                                  : std::vector<int64_t>{128, 256, 512, 1024};
    const bool shared_ok = !deterministic_ || Deterministic(p.reduction);
    SliceKnobs defaults;
    defaults.threads = deterministic_ ? 0 : 256;
    Knobs<SliceKnobs> knobs(defaults);
    knobs.Int("columns", &SliceKnobs::columns, columns)
        .Int("threads", &SliceKnobs::threads, threads)
        .Constrain("in order: 32 <= columns <= 1024 threads",
                   [](const SliceKnobs& k) { return k.threads != 0 || (k.columns >= 32 && k.columns <= 1024); })
        .Constrain("shared updates only where the result does not depend on their order",
                   [shared_ok](const SliceKnobs& k) { return k.threads == 0 || shared_ok; });
    return knobs;
  }
  bool deterministic_;
};

// Column-privatized scatter-add (ColumnsFit: f32, i32, i64 along axis 0 of an out with
// nothing outside the axis). Integers are exact; f32 merges in varying order.
class ScatterCudaColumns : public ScatterGpu {
 public:
  std::string_view name() const override { return "scatter_cuda_columns"; }
  ImplementationTraits traits() const override { return {.deterministic = false, .in_place = true}; }
  Status Applicable(const Workload& w, const Target& t) const override {
    const Params p = MakeParams(w);
    if (!k::ColumnsFit(p)) {
      return absl::InvalidArgumentError(
          "serves add of f32, i32 and i64 along axis 0 of contiguous tensors with nothing outside the axis, "
          "positions within 31 bits");
    }
    if (Space(w, t).Enumerate(1).empty()) {
      return absl::InvalidArgumentError(fmt::format("a tile of {} rows of 8 columns exceeds {} KiB of shared memory",
                                                    p.axis_size, k::kColumnsMaxSharedBytes / 1024));
    }
    return absl::OkStatus();
  }
  ConfigSpace Space(const Workload& w, const Target&) const override { return KnobsOf(w).Space(); }
  size_t WorkspaceBytes(const Workload&, const Config&) const override { return k::kWordBytes; }
  StatusOr<Launcher> MakeLauncher(const Workload& w, const Config& c) const override {
    OPSCHED_ASSIGN_OR_RETURN(const ColumnsKnobs knobs, KnobsOf(w).Parse(c));
    const k::ColumnsConfig config{knobs.columns, knobs.chunks, knobs.block};
    return Launcher([copy = CopyConfigOf(knobs), config](const Params& p, const PreparedArgs& a) {
      return k::LaunchColumns(p, copy, config, a.workspace, a.error_slot, StreamOf(a));
    });
  }

 private:
  struct ColumnsKnobs {
    int columns = 32;  // neighbouring columns of a block's tile
    int chunks = 16;   // blocks over the update rows for each slice of columns
    int block = 512;
    int copy_block = 256;
    int copy_vector = 16;
  };
  static Knobs<ColumnsKnobs> KnobsOf(const Workload& w) {
    const Params p = MakeParams(w);
    Knobs<ColumnsKnobs> knobs;
    knobs.Int("columns", &ColumnsKnobs::columns, {8, 16, 32, 64})
        .Int("chunks", &ColumnsKnobs::chunks, {4, 8, 16, 32, 64})
        .Int("block", &ColumnsKnobs::block, {256, 512, 1024})
        .Constrain("the tile within the shared memory limit",
                   [p](const ColumnsKnobs& k) {
                     return k::ColumnsSharedBytes(p, k.columns) <= k::kColumnsMaxSharedBytes;
                   });
    DeclareCopy(knobs, {128, 256, 512}, {16});
    return knobs;
  }
};

class ScatterCudaBucketed : public ScatterGpu {
 public:
  std::string_view name() const override { return "scatter_cuda_bucketed"; }
  ImplementationTraits traits() const override {
    return {.deterministic = false, .vendor_library = true, .in_place = true};
  }
  Status Applicable(const Workload& w, const Target&) const override {
    const TensorDesc& data = *w.FindTensor("data");
    if (data.storage_elements() >= (int64_t(1) << 32) - 1 || MakeParams(w).n >= (int64_t(1) << 31)) {
      return absl::InvalidArgumentError("targets and positions must fit 32 bits");
    }
    return absl::OkStatus();
  }
  ConfigSpace Space(const Workload&, const Target&) const override { return KnobsOf().Space(); }
  size_t WorkspaceBytes(const Workload& w, const Config&) const override {
    return k::BucketedWorkspaceBytes(MakeParams(w));
  }
  StatusOr<Launcher> MakeLauncher(const Workload&, const Config& c) const override {
    OPSCHED_ASSIGN_OR_RETURN(const BucketedKnobs knobs, KnobsOf().Parse(c));
    return Launcher([copy = CopyConfigOf(knobs), knobs](const Params& p, const PreparedArgs& a) {
      return k::LaunchBucketed(p, copy, knobs.bucket_bits, knobs.block, knobs.windows != 0, a.workspace,
                               a.workspace_bytes, a.error_slot, StreamOf(a));
    });
  }

 private:
  struct BucketedKnobs {
    int bucket_bits = 4;  // targets bucketed by their top bits
    int windows = 0;      // 1: each window of out copied just before its bucket (out of place, contiguous)
    int block = 256;
    int copy_block = 256;
    int copy_vector = 16;
  };
  static Knobs<BucketedKnobs> KnobsOf() {
    Knobs<BucketedKnobs> knobs;
    knobs.Int("bucket_bits", &BucketedKnobs::bucket_bits, {2, 3, 4, 5, 6, 8})
        .Int("block", &BucketedKnobs::block, {256, 512, 1024})
        .Int("windows", &BucketedKnobs::windows, {0, 1});
    DeclareCopy(knobs, {256, 1024}, {16});
    return knobs;
  }
};

}  // namespace

Status RegisterCudaImpls(Registry& registry) {
  OPSCHED_RETURN_IF_ERROR(registry.AddImplementation(std::make_unique<ScatterCudaSequential>()));
  OPSCHED_RETURN_IF_ERROR(registry.AddImplementation(std::make_unique<ScatterCudaParallel>()));
  OPSCHED_RETURN_IF_ERROR(registry.AddImplementation(std::make_unique<ScatterCudaSorted>()));
  OPSCHED_RETURN_IF_ERROR(registry.AddImplementation(std::make_unique<ScatterCudaPrivatized>(true)));
  OPSCHED_RETURN_IF_ERROR(registry.AddImplementation(std::make_unique<ScatterCudaPrivatized>(false)));
  OPSCHED_RETURN_IF_ERROR(registry.AddImplementation(std::make_unique<ScatterCudaSlice>(true)));
  OPSCHED_RETURN_IF_ERROR(registry.AddImplementation(std::make_unique<ScatterCudaSlice>(false)));
  OPSCHED_RETURN_IF_ERROR(registry.AddImplementation(std::make_unique<ScatterCudaBucketed>()));
  OPSCHED_RETURN_IF_ERROR(registry.AddImplementation(std::make_unique<ScatterCudaColumns>()));
  return absl::OkStatus();
}

}  // namespace opsched::scatter
