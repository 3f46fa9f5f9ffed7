// The cuDNN backward extern (the legacy convolution API, still in cuDNN 9):
// cudnnConvolutionBackwardData into dx and cudnnConvolutionBackwardFilter into dw.
// Knobs: data_algo and filter_algo (the algorithms cuDNN supports for the workload) and
// streams:
//   1  both on the caller's stream, one after the other, sharing one workspace;
//   2  the filter gradient on an auxiliary stream, concurrent with the data gradient
//      (MXNet #14006's dual-stream backward): the two are independent, and either alone
//      may leave the GPU partly idle on small shapes. Each has its own part of the
//      workspace and its own cuDNN handle.
// Two registrations, because traits are per implementation: conv2d_backward_cudnn offers
// every algorithm and is non-deterministic; conv2d_backward_cudnn_deterministic leaves out
// those cuDNN documents as non-deterministic (BWD_DATA_ALGO_0, BWD_FILTER_ALGO_0 and
// ALGO_3, which accumulate with atomics).
#include <algorithm>
#include <memory>
#include <string>
#include <vector>

#include "core/format.h"
#include "core/gpu/gpu_status.h"
#include "extern/cudnn/cudnn_handle.h"
#include "extern/cudnn/replayed_prepared.h"
#include "ops/conv2d/conv2d_aux_stream.h"
#include "ops/conv2d/conv2d_cudnn_descriptors.h"
#include "ops/conv2d/conv2d_def.h"
#include "ops/conv2d/conv2d_register.h"
#include "registry/knobs.h"
#include "registry/registry.h"

// The legacy convolution API (cudnn_cnn.h) is deprecated in cuDNN 9 but still present.
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"

namespace opsched::conv2d {
namespace {

constexpr float kOne = 1.0f;
constexpr float kZero = 0.0f;

// The names of the supported algorithms, less the non-deterministic ones when asked.
template <typename Algo>
std::vector<std::string> AlgoValues(const std::vector<SupportedAlgo<Algo>>& supported, bool deterministic_only) {
  std::vector<std::string> values;
  for (const SupportedAlgo<Algo>& s : supported) {
    if (!deterministic_only || IsDeterministic(s.algo)) values.emplace_back(std::string(AlgoName(s.algo)));
  }
  return values;
}

// The chosen algorithms and the workspace each needs.
struct BackwardPlan {
  cudnnConvolutionBwdDataAlgo_t data_algo;
  cudnnConvolutionBwdFilterAlgo_t filter_algo;
  size_t data_bytes = 0;
  size_t filter_bytes = 0;
  int streams = 1;

  // One workspace reused in turn, or two side by side.
  size_t workspace_bytes() const { return BackwardWorkspaceBytes(data_bytes, filter_bytes, streams); }
};

// The backward knobs: cuDNN's data and filter algorithms by name (required, as the
// forward one), over the supported ones (deterministic ones only for the deterministic
// implementation; none when the query fails, and Applicable says why), and the streams.
struct BackwardKnobs {
  std::string data_algo;
  std::string filter_algo;
  int streams = 1;
};
Knobs<BackwardKnobs> BackwardKnobsOf(const Workload& w, bool deterministic_only) {
  std::vector<std::string> data, filter;
  if (StatusOr<const AlgoQuery*> query = QueryAlgorithms(w); query.ok()) {
    data = AlgoValues((*query)->backward_data, deterministic_only);
    filter = AlgoValues((*query)->backward_filter, deterministic_only);
  }
  Knobs<BackwardKnobs> knobs;
  knobs.Word("data_algo", &BackwardKnobs::data_algo, std::move(data), KnobPresence::kRequired)
      .Word("filter_algo", &BackwardKnobs::filter_algo, std::move(filter), KnobPresence::kRequired)
      .Int("streams", &BackwardKnobs::streams, {1, 2});
  return knobs;
}

// The config's algorithms with their workspaces: Unimplemented when cuDNN does not
// support one for this workload (or, for the deterministic implementation, when it is
// a non-deterministic one), InvalidArgument for a malformed config.
StatusOr<BackwardPlan> PlanFor(const Workload& w, const Config& config, bool deterministic_only) {
  OPSCHED_ASSIGN_OR_RETURN(const BackwardKnobs knobs, BackwardKnobsOf(w, deterministic_only).Parse(config));
  const std::string_view data_name = knobs.data_algo, filter_name = knobs.filter_algo;
  if (knobs.streams != 1 && knobs.streams != 2) {
    return absl::InvalidArgumentError(fmt::format("streams={} is not 1 or 2", knobs.streams));
  }
  BackwardPlan plan;
  plan.streams = knobs.streams;
  OPSCHED_ASSIGN_OR_RETURN(plan.data_algo, ParseBackwardDataAlgo(data_name));
  OPSCHED_ASSIGN_OR_RETURN(plan.filter_algo, ParseBackwardFilterAlgo(filter_name));
  if (deterministic_only && !(IsDeterministic(plan.data_algo) && IsDeterministic(plan.filter_algo))) {
    return absl::UnimplementedError(
        fmt::format("data_algo={} filter_algo={} is not deterministic", data_name, filter_name));
  }
  OPSCHED_ASSIGN_OR_RETURN(const AlgoQuery* query, QueryAlgorithms(w));
  const std::optional<size_t> data_bytes = query->Workspace(plan.data_algo);
  const std::optional<size_t> filter_bytes = query->Workspace(plan.filter_algo);
  if (!data_bytes.has_value()) {
    return absl::UnimplementedError(
        fmt::format("cuDNN does not support backward data algorithm {} for this shape", data_name));
  }
  if (!filter_bytes.has_value()) {
    return absl::UnimplementedError(
        fmt::format("cuDNN does not support backward filter algorithm {} for this shape", filter_name));
  }
  plan.data_bytes = *data_bytes;
  plan.filter_bytes = *filter_bytes;
  return plan;
}

Status BackwardData(cudnnHandle_t handle, const CudnnDescriptors& d, const Problem& p,
                    cudnnConvolutionBwdDataAlgo_t algo, void* workspace, size_t bytes) {
  OPSCHED_CUDNN_RETURN_IF_ERROR(cudnnConvolutionBackwardData(handle, &kOne, d.w(), p.wt, d.y(), p.y, d.conv(), algo,
                                                             workspace, bytes, &kZero, d.dx(), p.dx));
  return absl::OkStatus();
}

Status BackwardFilter(cudnnHandle_t handle, const CudnnDescriptors& d, const Problem& p,
                      cudnnConvolutionBwdFilterAlgo_t algo, void* workspace, size_t bytes) {
  OPSCHED_CUDNN_RETURN_IF_ERROR(cudnnConvolutionBackwardFilter(handle, &kOne, d.x(), p.x, d.y(), p.y, d.conv(), algo,
                                                               workspace, bytes, &kZero, d.w(), p.dw));
  return absl::OkStatus();
}

// streams=1: data then filter gradient on the caller's stream, one workspace in turn.
Status RunSingleStream(const PreparedArgs& a, const CudnnDescriptors& d, const Problem& p,
                       const BackwardPlan& plan) {
  OPSCHED_ASSIGN_OR_RETURN(cudnnHandle_t handle, cudnn::Handle(static_cast<cudaStream_t>(a.stream.native())));
  OPSCHED_RETURN_IF_ERROR(BackwardData(handle, d, p, plan.data_algo, a.workspace, plan.data_bytes));
  return BackwardFilter(handle, d, p, plan.filter_algo, a.workspace, plan.filter_bytes);
}

// streams=2: the caller's stream forks to the aux stream (filter gradient) and joins it
// again, so later work on the caller's stream sees dw and the workspace is free to
// reuse once the caller's stream passes this point. No host synchronisation.
Status RunDualStream(const PreparedArgs& a, const CudnnDescriptors& d, const Problem& p, const BackwardPlan& plan) {
  const auto main = static_cast<cudaStream_t>(a.stream.native());
  OPSCHED_ASSIGN_OR_RETURN(cudnnHandle_t main_handle, cudnn::Handle(main));
  char* const workspace = static_cast<char*>(a.workspace);
  void* const filter_workspace = plan.filter_bytes > 0 ? workspace + FilterWorkspaceOffset(plan.data_bytes) : nullptr;
  return ForkJoin(
      main, "conv2d_backward_cudnn",
      [&](cudaStream_t aux) -> Status {
        OPSCHED_ASSIGN_OR_RETURN(cudnnHandle_t aux_handle, cudnn::Handle(aux, kAuxHandleSlot));
        return BackwardFilter(aux_handle, d, p, plan.filter_algo, filter_workspace, plan.filter_bytes);
      },
      [&] { return BackwardData(main_handle, d, p, plan.data_algo, workspace, plan.data_bytes); });
}

// The backward prepared for one workload and config: problem, descriptors and plan made
// once; Run binds the tensors.
class PreparedBackward final : public Prepared {
 public:
  PreparedBackward(const Problem& p, const BackwardPlan& plan) : Prepared(plan.workspace_bytes()), p_(p), plan_(plan) {}
  Status Init() { return d_.Init(p_); }

  Status Run(const PreparedArgs& a) const override {
    if (workspace_bytes() > a.workspace_bytes) {
      return absl::InternalError(fmt::format("conv2d_backward_cudnn needs {} bytes of workspace, {} given",
                                             workspace_bytes(), a.workspace_bytes));
    }
    const Problem p = WithTensors(p_, a.tensors);
    return plan_.streams == 2 ? RunDualStream(a, d_, p, plan_) : RunSingleStream(a, d_, p, plan_);
  }

 private:
  const Problem p_;
  const BackwardPlan plan_;
  CudnnDescriptors d_;
};

StatusOr<std::unique_ptr<Prepared>> PrepareBackward(const Workload& w, const Config& config, bool deterministic_only) {
  OPSCHED_ASSIGN_OR_RETURN(const BackwardPlan plan, PlanFor(w, config, deterministic_only));
  auto prepared = std::make_unique<PreparedBackward>(MakeProblem(w), plan);
  OPSCHED_RETURN_IF_ERROR(prepared->Init());
  return cudnn::Replayed(std::move(prepared));
}

template <bool kDeterministicOnly>
class Conv2dBackwardCudnn : public Implementation {
 public:
  std::string_view op() const override { return "conv2d_backward"; }
  std::string_view name() const override {
    return kDeterministicOnly ? "conv2d_backward_cudnn_deterministic" : "conv2d_backward_cudnn";
  }
  DeviceKind device_kind() const override { return DeviceKind::kCuda; }
  ImplementationTraits traits() const override {
    return {.deterministic = kDeterministicOnly, .vendor_library = true, .uses_cublas = true, .uses_cudnn = true};
  }

  Status Applicable(const Workload& w, const Target& target) const override {
    if (target.kind != DeviceKind::kCuda) return absl::InvalidArgumentError("cuDNN needs a CUDA device");
    OPSCHED_RETURN_IF_ERROR(CheckCudnnProblem(MakeProblem(w)));
    OPSCHED_ASSIGN_OR_RETURN(const AlgoQuery* query, QueryAlgorithms(w));
    const std::string_view which = kDeterministicOnly ? "deterministic " : "";
    if (AlgoValues(query->backward_data, kDeterministicOnly).empty()) {
      return absl::InvalidArgumentError(fmt::format("cuDNN supports no {}backward data algorithm for this shape", which));
    }
    if (AlgoValues(query->backward_filter, kDeterministicOnly).empty()) {
      return absl::InvalidArgumentError(
          fmt::format("cuDNN supports no {}backward filter algorithm for this shape", which));
    }
    return absl::OkStatus();
  }

  ConfigSpace Space(const Workload& w, const Target&) const override {
    return BackwardKnobsOf(w, kDeterministicOnly).Space();
  }

  // cuDNN's heuristic data and filter algorithms, on one stream.
  StatusOr<Config> VendorChoice(const Workload& w, const Target&) const override {
    OPSCHED_ASSIGN_OR_RETURN(const AlgoQuery* query, QueryAlgorithms(w));
    if (!query->heuristic_backward_data || !query->heuristic_backward_filter) {
      return absl::NotFoundError("cuDNN's heuristic suggests no supported backward algorithms");
    }
    return Config()
        .Set("data_algo", std::string(AlgoName(*query->heuristic_backward_data)))
        .Set("filter_algo", std::string(AlgoName(*query->heuristic_backward_filter)))
        .Set("streams", int64_t{1});
  }

  size_t WorkspaceBytes(const Workload& w, const Config& config) const override {
    StatusOr<BackwardPlan> plan = PlanFor(w, config, kDeterministicOnly);
    return plan.ok() ? plan->workspace_bytes() : 0;  // Run reports the error
  }

  StatusOr<std::unique_ptr<Prepared>> Prepare(const Workload& w, const Config& config, const Target&) const override {
    return PrepareBackward(w, config, kDeterministicOnly);
  }
  Status Run(const RunArgs& a) const override { return PrepareAndRun(*this, a); }
};

using Conv2dBackwardCudnnAny = Conv2dBackwardCudnn<false>;
using Conv2dBackwardCudnnDeterministic = Conv2dBackwardCudnn<true>;

}  // namespace

Status RegisterCudnnBackward(Registry& registry) {
  OPSCHED_RETURN_IF_ERROR(registry.AddImplementation(std::make_unique<Conv2dBackwardCudnnAny>()));
  OPSCHED_RETURN_IF_ERROR(registry.AddImplementation(std::make_unique<Conv2dBackwardCudnnDeterministic>()));
  return absl::OkStatus();
}

}  // namespace opsched::conv2d
