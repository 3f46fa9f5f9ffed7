// The cuDNN graph-API implementations (plans and engines: conv2d_cudnn_graph.h):
//   conv2d_cudnn_graph            conv2d: one forward convolution operation; knob
//                                 `engine` (its global index, of the usable engines).
//   conv2d_backward_cudnn_graph   conv2d_backward: a backward data operation into dx and a
//                                 backward filter operation into dw; knobs data_engine,
//                                 filter_engine and streams:
//     1  both on the caller's stream, one after the other, sharing one workspace;
//     2  the filter gradient on the auxiliary stream (conv2d_aux_stream.h), concurrent
//        with the data gradient, each with its own part of the workspace and its own
//        cuDNN handle (MXNet #14006).
// Both are deterministic: engines cuDNN notes as non-deterministic are never offered.
#include <algorithm>
#include <initializer_list>
#include <string>
#include <vector>

#include "core/format.h"
#include "core/gpu/gpu_status.h"
#include "extern/cudnn/cudnn_handle.h"
#include "extern/cudnn/replayed_prepared.h"
#include "ops/conv2d/conv2d_aux_stream.h"
#include "ops/conv2d/conv2d_cudnn_descriptors.h"
#include "ops/conv2d/conv2d_cudnn_graph.h"
#include "ops/conv2d/conv2d_def.h"
#include "ops/conv2d/conv2d_register.h"
#include "registry/knobs.h"
#include "registry/registry.h"

namespace opsched::conv2d {

namespace {

cudaStream_t NativeStream(const PreparedArgs& a) { return static_cast<cudaStream_t>(a.stream.native()); }

// ---------------------------------------------------------------------------------------
// The implementations.

constexpr std::string_view kExcludedEngines =
    "(engines that compile at run time, are non-deterministic, down-convert inputs or reduce in reduced precision, "
    "and for f32 with math=fp32 those on tensor cores, are left out)";

std::vector<int64_t> EngineIndices(const std::vector<GraphEngine>& engines) {
  std::vector<int64_t> indices;
  indices.reserve(engines.size());
  for (const GraphEngine& e : engines) indices.push_back(e.index);
  return indices;
}

// The engine indices of `op` for the space; none when the query fails (Applicable says
// why).
std::vector<int64_t> SpaceEngines(const Workload& w, GraphOp op) {
  StatusOr<const GraphEngineQuery*> query = QueryGraphEngines(w);
  return query.ok() ? EngineIndices((*query)->engines(op)) : std::vector<int64_t>();
}

// The checks of Applicable: a CUDA target, a problem the legacy externs accept too
// (non-empty tensors, non-negative strides, w packed), and a usable engine per
// operation.
Status CheckApplicable(const Workload& w, const Target& target, std::initializer_list<GraphOp> ops) {
  if (target.kind != DeviceKind::kCuda) return absl::InvalidArgumentError("cuDNN needs a CUDA device");
  OPSCHED_RETURN_IF_ERROR(CheckCudnnProblem(MakeProblem(w)));
  OPSCHED_ASSIGN_OR_RETURN(const GraphEngineQuery* query, QueryGraphEngines(w));
  for (GraphOp op : ops) {
    if (query->engines(op).empty()) {
      return absl::InvalidArgumentError(fmt::format("cuDNN's graph API has no usable {} engine for this shape {}",
                                                    GraphOpName(op), kExcludedEngines));
    }
  }
  return absl::OkStatus();
}

// The forward knob: the graph engine by its global index, over the usable ones. Required:
// no engine is right for every shape.
struct ForwardKnobs {
  int64_t engine = 0;
};
Knobs<ForwardKnobs> ForwardKnobsOf(const Workload& w) {
  Knobs<ForwardKnobs> knobs;
  knobs.Int("engine", &ForwardKnobs::engine, SpaceEngines(w, GraphOp::kForward), KnobPresence::kRequired);
  return knobs;
}

class Conv2dCudnnGraph : public Implementation {
 public:
  std::string_view op() const override { return "conv2d"; }
  std::string_view name() const override { return "conv2d_cudnn_graph"; }
  DeviceKind device_kind() const override { return DeviceKind::kCuda; }
  ImplementationTraits traits() const override {
    return {.deterministic = true, .vendor_library = true, .uses_cublas = true, .uses_cudnn = true};
  }

  Status Applicable(const Workload& w, const Target& target) const override {
    return CheckApplicable(w, target, {GraphOp::kForward});
  }

  ConfigSpace Space(const Workload& w, const Target&) const override { return ForwardKnobsOf(w).Space(); }

  // 0 when the engine is unknown; Run reports the error.
  size_t WorkspaceBytes(const Workload& w, const Config& config) const override {
    StatusOr<ForwardKnobs> knobs = ForwardKnobsOf(w).Parse(config);
    StatusOr<const GraphEngineQuery*> query = QueryGraphEngines(w);
    if (!knobs.ok() || !query.ok()) return 0;
    return (*query)->Workspace(GraphOp::kForward, knobs->engine).value_or(0);
  }

  StatusOr<std::unique_ptr<Prepared>> Prepare(const Workload& w, const Config& config, const Target&) const override {
    OPSCHED_ASSIGN_OR_RETURN(const ForwardKnobs knobs, ForwardKnobsOf(w).Parse(config));
    const int64_t engine = knobs.engine;
    return cudnn::Replayed(MakePrepared(
        WorkspaceBytes(w, config), [this, p = MakeProblem(w), hash = w.hash(), engine](const PreparedArgs& a) -> Status {
          // An empty y has nothing to write (cuDNN refuses zero-sized tensors).
          if (p.n == 0 || p.k == 0 || p.p == 0 || p.q == 0) return absl::OkStatus();
          OPSCHED_ASSIGN_OR_RETURN(cudnnHandle_t handle, cudnn::Handle(NativeStream(a)));
          return ExecuteGraphOp(handle, GraphOp::kForward, WithTensors(p, a.tensors), hash, engine, a.workspace,
                                a.workspace_bytes, name());
        }));
  }
  Status Run(const RunArgs& a) const override { return PrepareAndRun(*this, a); }
};

// The backward knobs: the data and filter engines (required, as the forward one) and
// the streams (2: the filter gradient on an auxiliary stream).
struct BackwardKnobs {
  int64_t data_engine = 0;
  int64_t filter_engine = 0;
  int streams = 1;
};
Knobs<BackwardKnobs> BackwardKnobsOf(const Workload& w) {
  Knobs<BackwardKnobs> knobs;
  knobs.Int("data_engine", &BackwardKnobs::data_engine, SpaceEngines(w, GraphOp::kBackwardData), KnobPresence::kRequired)
      .Int("filter_engine", &BackwardKnobs::filter_engine, SpaceEngines(w, GraphOp::kBackwardFilter),
           KnobPresence::kRequired)
      .Int("streams", &BackwardKnobs::streams, {1, 2});
  return knobs;
}

StatusOr<BackwardKnobs> ParseBackwardKnobs(const Workload& w, const Config& config) {
  OPSCHED_ASSIGN_OR_RETURN(const BackwardKnobs knobs, BackwardKnobsOf(w).Parse(config));
  if (knobs.streams != 1 && knobs.streams != 2) {
    return absl::InvalidArgumentError(fmt::format("streams={} is not 1 or 2", knobs.streams));
  }
  return knobs;
}

// The workspace of each gradient, as the query measured it for the chosen engines.
struct BackwardWorkspace {
  size_t data_bytes = 0;
  size_t filter_bytes = 0;
  int streams = 1;

  // One workspace reused in turn, or two side by side (the filter part 256-byte aligned).
  size_t total() const { return BackwardWorkspaceBytes(data_bytes, filter_bytes, streams); }
};

// Unimplemented when an engine is not usable for the workload.
StatusOr<BackwardWorkspace> WorkspaceFor(const Workload& w, uint64_t hash, const BackwardKnobs& knobs) {
  OPSCHED_ASSIGN_OR_RETURN(const GraphEngineQuery* query, QueryGraphEngines(w, hash));
  const std::optional<size_t> data = query->Workspace(GraphOp::kBackwardData, knobs.data_engine);
  const std::optional<size_t> filter = query->Workspace(GraphOp::kBackwardFilter, knobs.filter_engine);
  if (!data.has_value()) {
    return absl::UnimplementedError(
        fmt::format("backward data engine {} is not a usable engine for this shape", knobs.data_engine));
  }
  if (!filter.has_value()) {
    return absl::UnimplementedError(
        fmt::format("backward filter engine {} is not a usable engine for this shape", knobs.filter_engine));
  }
  return BackwardWorkspace{*data, *filter, knobs.streams};
}

// With no dy elements both gradients are sums over nothing: zeros, without cuDNN (which
// refuses zero-sized tensors). Outputs are contiguous, so one memset each.
Status ZeroGradients(const Problem& p, cudaStream_t stream) {
  const auto element = static_cast<size_t>(ElementBytes(p.type));
  const auto dx_bytes = static_cast<size_t>(p.n * p.c * p.h * p.w) * element;
  const auto dw_bytes = static_cast<size_t>(p.k * p.channels_per_group() * p.r * p.s) * element;
  if (dx_bytes > 0) {
    OPSCHED_GPU_RETURN_IF_ERROR(cudaMemsetAsync(p.dx, 0, dx_bytes, stream), "conv2d_backward_cudnn_graph dx");
  }
  if (dw_bytes > 0) {
    OPSCHED_GPU_RETURN_IF_ERROR(cudaMemsetAsync(p.dw, 0, dw_bytes, stream), "conv2d_backward_cudnn_graph dw");
  }
  return absl::OkStatus();
}

class Conv2dBackwardCudnnGraph : public Implementation {
 public:
  std::string_view op() const override { return "conv2d_backward"; }
  std::string_view name() const override { return "conv2d_backward_cudnn_graph"; }
  DeviceKind device_kind() const override { return DeviceKind::kCuda; }
  ImplementationTraits traits() const override {
    return {.deterministic = true, .vendor_library = true, .uses_cublas = true, .uses_cudnn = true};
  }

  Status Applicable(const Workload& w, const Target& target) const override {
    return CheckApplicable(w, target, {GraphOp::kBackwardData, GraphOp::kBackwardFilter});
  }

  ConfigSpace Space(const Workload& w, const Target&) const override { return BackwardKnobsOf(w).Space(); }

  // 0 when the config is malformed or an engine unknown; Run reports the error.
  size_t WorkspaceBytes(const Workload& w, const Config& config) const override {
    StatusOr<BackwardKnobs> knobs = ParseBackwardKnobs(w, config);
    if (!knobs.ok()) return 0;
    StatusOr<BackwardWorkspace> workspace = WorkspaceFor(w, w.hash(), *knobs);
    return workspace.ok() ? workspace->total() : 0;
  }

  StatusOr<std::unique_ptr<Prepared>> Prepare(const Workload& w, const Config& config, const Target&) const override {
    OPSCHED_ASSIGN_OR_RETURN(const BackwardKnobs knobs, ParseBackwardKnobs(w, config));
    const Problem p = MakeProblem(w);
    const uint64_t hash = w.hash();
    BackwardWorkspace workspace;
    const bool empty = p.n == 0 || p.k == 0 || p.p == 0 || p.q == 0;
    if (!empty) {
      OPSCHED_ASSIGN_OR_RETURN(workspace, WorkspaceFor(w, hash, knobs));
    }
    return cudnn::Replayed(MakePrepared(workspace.total(), [this, p, hash, knobs, workspace,
                                                            empty](const PreparedArgs& a) -> Status {
      const Problem bound = WithTensors(p, a.tensors);
      if (empty) return ZeroGradients(bound, NativeStream(a));
      if (workspace.total() > a.workspace_bytes) {
        return absl::InternalError(fmt::format("{} needs {} bytes of workspace, {} given", name(), workspace.total(),
                                               a.workspace_bytes));
      }
      return knobs.streams == 2 ? RunDualStream(a, bound, hash, knobs, workspace)
                                : RunSingleStream(a, bound, hash, knobs);
    }));
  }
  Status Run(const RunArgs& a) const override { return PrepareAndRun(*this, a); }

 private:
  // Data then filter gradient on the caller's stream, each free to use all the workspace.
  Status RunSingleStream(const PreparedArgs& a, const Problem& p, uint64_t hash, const BackwardKnobs& knobs) const {
    OPSCHED_ASSIGN_OR_RETURN(cudnnHandle_t handle, cudnn::Handle(NativeStream(a)));
    OPSCHED_RETURN_IF_ERROR(ExecuteGraphOp(handle, GraphOp::kBackwardData, p, hash, knobs.data_engine, a.workspace,
                                           a.workspace_bytes, name()));
    return ExecuteGraphOp(handle, GraphOp::kBackwardFilter, p, hash, knobs.filter_engine, a.workspace,
                          a.workspace_bytes, name());
  }

  // The caller's stream forks to the aux stream (filter gradient) and joins it again, so
  // later work on the caller's stream sees dw and the workspace is free to reuse once
  // the caller's stream passes this point. No host synchronisation.
  Status RunDualStream(const PreparedArgs& a, const Problem& p, uint64_t hash, const BackwardKnobs& knobs,
                       const BackwardWorkspace& workspace) const {
    const cudaStream_t main = NativeStream(a);
    OPSCHED_ASSIGN_OR_RETURN(cudnnHandle_t main_handle, cudnn::Handle(main));
    // The data gradient's part first, then the filter gradient's from a 256-byte
    // boundary to the end of what was given.
    const size_t split = FilterWorkspaceOffset(workspace.data_bytes);
    const size_t filter_bytes = a.workspace_bytes - split;  // Run checked total() fits
    char* const base = static_cast<char*>(a.workspace);
    void* const filter_workspace = base != nullptr && filter_bytes > 0 ? base + split : nullptr;
    return ForkJoin(
        main, name(),
        [&](cudaStream_t aux) -> Status {
          OPSCHED_ASSIGN_OR_RETURN(cudnnHandle_t aux_handle, cudnn::Handle(aux, kAuxHandleSlot));
          return ExecuteGraphOp(aux_handle, GraphOp::kBackwardFilter, p, hash, knobs.filter_engine, filter_workspace,
                                filter_bytes, name());
        },
        [&] {
          return ExecuteGraphOp(main_handle, GraphOp::kBackwardData, p, hash, knobs.data_engine, base, split, name());
        });
  }
};

}  // namespace

Status RegisterCudnnGraphImpls(Registry& registry) {
  OPSCHED_RETURN_IF_ERROR(registry.AddImplementation(std::make_unique<Conv2dCudnnGraph>()));
  OPSCHED_RETURN_IF_ERROR(registry.AddImplementation(std::make_unique<Conv2dBackwardCudnnGraph>()));
  return absl::OkStatus();
}

}  // namespace opsched::conv2d
