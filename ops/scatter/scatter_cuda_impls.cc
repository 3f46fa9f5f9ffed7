// The GPU scatter implementations: their applicability, config spaces and launches.
#include "core/format.h"
#include "core/gpu/gpu_backend.h"
#include "core/gpu/gpu_status.h"
#include "ops/scatter/scatter_cuda.h"
#include "ops/scatter/scatter_def.h"
#include "strategies/registry.h"

namespace opsched::scatter {
namespace {

namespace k = gpu_kernels;

Params ParamsFor(const RunArgs& a) {
  Params p = MakeParams(a.workload);
  p.data = a.tensors[0].data;
  p.indices = a.tensors[1].data;
  p.updates = a.tensors[2].data;
  p.out = a.tensors[3].data;
  p.in_place = a.tensors[3].data == a.tensors[0].data;
  return p;
}

gpuStream_t StreamOf(const RunArgs& a) { return static_cast<gpuStream_t>(a.stream.native()); }

k::CopyConfig CopyConfigOf(const Config& c) {
  return k::CopyConfig{static_cast<int>(c.GetInt("copy_block", 256)),
                       static_cast<int>(c.GetInt("copy_vector", 16))};
}

class ScatterGpu : public Implementation {
 public:
  std::string_view op() const override { return "scatter"; }
  DeviceKind device_kind() const override { return DeviceKind::kCuda; }
  bool ReportsDeviceErrors() const override { return true; }
  Status Applicable(const Workload&, const Target&) const override { return absl::OkStatus(); }

 protected:
  Status Launched(gpuError_t err) const { return gpu::ToStatus(err, "launch", name()); }
};

class ScatterCudaSequential : public ScatterGpu {
 public:
  std::string_view name() const override { return "scatter_cuda_sequential"; }
  ImplementationTraits traits() const override {
    return {.deterministic = true, .vendor_library = false, .in_place = true};
  }
  ConfigSpace Space(const Workload&, const Target&) const override {
    return ConfigSpace().AddInts("threads", {32, 128, 512}).AddInts("fused_copy", {1, 0});
  }
  Status Run(const RunArgs& a) const override {
    const Params p = ParamsFor(a);
    const bool fused = a.config.GetInt("fused_copy", 1) != 0;
    if (!fused && !p.in_place) {
      OPSCHED_RETURN_IF_ERROR(Launched(k::LaunchCopy(p, k::CopyConfig{}, StreamOf(a))));
    }
    return Launched(k::LaunchSequential(p, fused, static_cast<int>(a.config.GetInt("threads", 32)),
                                        a.error_slot, StreamOf(a)));
  }
};

class ScatterCudaParallel : public ScatterGpu {
 public:
  std::string_view name() const override { return "scatter_cuda_parallel"; }
  ImplementationTraits traits() const override {
    // Atomic order varies between runs (float add), and with reduction none duplicate
    // targets keep an arbitrary one of their updates.
    return {.deterministic = false, .vendor_library = false, .in_place = true};
  }
  ConfigSpace Space(const Workload&, const Target&) const override {
    return ConfigSpace()
        .AddInts("block", {64, 128, 256, 512, 1024})
        .AddInts("items", {1, 2, 4, 8})
        .AddInts("copy_block", {128, 256, 512, 1024})
        .AddInts("copy_vector", {4, 8, 16});
  }
  size_t WorkspaceBytes(const Workload&, const Config&) const override { return k::kWordBytes; }
  Status Run(const RunArgs& a) const override {
    return Launched(k::LaunchParallel(ParamsFor(a), CopyConfigOf(a.config),
                                      static_cast<int>(a.config.GetInt("block", 256)),
                                      static_cast<int>(a.config.GetInt("items", 1)), a.workspace,
                                      a.error_slot, StreamOf(a)));
  }
};

class ScatterCudaSorted : public ScatterGpu {
 public:
  std::string_view name() const override { return "scatter_cuda_sorted"; }
  ImplementationTraits traits() const override {
    return {.deterministic = true, .vendor_library = true, .in_place = true};
  }
  ConfigSpace Space(const Workload&, const Target&) const override {
    return ConfigSpace()
        .AddInts("block", {128, 256, 512})
        .AddInts("copy_block", {256, 1024})
        .AddInts("copy_vector", {16});
  }
  size_t WorkspaceBytes(const Workload& w, const Config&) const override {
    return k::SortedWorkspaceBytes(MakeParams(w));
  }
  Status Run(const RunArgs& a) const override {
    return Launched(k::LaunchSorted(ParamsFor(a), CopyConfigOf(a.config),
                                    static_cast<int>(a.config.GetInt("block", 256)), a.workspace,
                                    a.workspace_bytes, a.error_slot, StreamOf(a)));
  }
};

class ScatterCudaPrivatized : public ScatterGpu {
 public:
  std::string_view name() const override { return "scatter_cuda_privatized"; }
  ImplementationTraits traits() const override {
    return {.deterministic = false, .vendor_library = false, .in_place = true};
  }
  Status Applicable(const Workload& w, const Target&) const override {
    const Params p = MakeParams(w);
    if (p.reduction == Reduction::kNone) {
      return absl::InvalidArgumentError("needs a reduction (add, mul, min or max), not none");
    }
    if (!p.fast) {
      return absl::InvalidArgumentError(
          "needs contiguous tensors with indices shaped like data outside the axis");
    }
    if (p.data_n > k::kPrivatizedMaxElements) {
      return absl::InvalidArgumentError(fmt::format(
          "out has {} elements; a shared-memory copy holds at most {}", p.data_n,
          k::kPrivatizedMaxElements));
    }
    return absl::OkStatus();
  }
  ConfigSpace Space(const Workload& w, const Target&) const override {
    const int64_t shared = MakeParams(w).data_n * int64_t(sizeof(float));
    return ConfigSpace()
        .AddInts("block", {256, 512, 1024})
        .AddInts("blocks_per_sm", {1, 2, 4, 8})
        .Constrain("blocks_per_sm * shared bytes <= 224 KiB", [shared](const Config& c) {
          return c.GetInt("blocks_per_sm", 1) * shared <= 224 * 1024;
        });
  }
  size_t WorkspaceBytes(const Workload& w, const Config&) const override {
    return k::PrivatizedWorkspaceBytes(MakeParams(w));
  }
  Status Run(const RunArgs& a) const override {
    return Launched(k::LaunchPrivatized(ParamsFor(a), static_cast<int>(a.config.GetInt("block", 256)),
                                        static_cast<int>(a.config.GetInt("blocks_per_sm", 2)),
                                        gpu::MultiprocessorCount(a.stream.device()), a.workspace,
                                        a.error_slot, StreamOf(a)));
  }
};

OPSCHED_REGISTER_IMPLEMENTATION(ScatterCudaSequential);
OPSCHED_REGISTER_IMPLEMENTATION(ScatterCudaParallel);
OPSCHED_REGISTER_IMPLEMENTATION(ScatterCudaSorted);
OPSCHED_REGISTER_IMPLEMENTATION(ScatterCudaPrivatized);

}  // namespace
}  // namespace opsched::scatter
