// The cuDNN forward externs (the legacy convolution API, still in cuDNN 9), each with
// one knob `algo` over the forward algorithms cuDNN supports for the workload:
//   conv2d_cudnn                  conv2d: cudnnConvolutionForward.
//   conv2d_bias_act_cudnn         conv2d_bias_act: the fused
//                                 cudnnConvolutionBiasActivationForward (relu, or
//                                 identity with implicit_precomp_gemm).
//   conv2d_bias_act_cudnn_unfused conv2d_bias_act: cudnnConvolutionForward, then
//                                 cudnnAddTensor (bias), then cudnnActivationForward in
//                                 place; every activation.
// Every forward algorithm of cuDNN is deterministic.
#include <memory>
#include <string>
#include <vector>

#include "core/format.h"
#include "extern/cudnn/cudnn_handle.h"
#include "extern/cudnn/replayed_prepared.h"
#include "ops/conv2d/conv2d_cudnn_descriptors.h"
#include "ops/conv2d/conv2d_def.h"
#include "ops/conv2d/conv2d_reference.h"
#include "ops/conv2d/conv2d_register.h"
#include "registry/knobs.h"
#include "registry/registry.h"

// The legacy convolution API (cudnn_cnn.h) is deprecated in cuDNN 9 but still present.
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"

namespace opsched::conv2d {
namespace {

// Scaling factors: host floats, as cuDNN wants for f32, f16 and bf16 data alike.
constexpr float kOne = 1.0f;
constexpr float kZero = 0.0f;

// The fused call runs identity only with this algorithm (cuDNN's documentation of
// CUDNN_ACTIVATION_IDENTITY).
constexpr cudnnConvolutionFwdAlgo_t kIdentityFusedAlgo = CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_PRECOMP_GEMM;

// Which forward algorithms an implementation offers, of those cuDNN supports.
using AlgoFilter = bool (*)(const Problem& p, cudnnConvolutionFwdAlgo_t algo);

// Winograd and FFT only where TransformsAllowed (conv2d_reference.h).
bool AccurateEnough(const Problem& p, cudnnConvolutionFwdAlgo_t algo) {
  const bool transform = algo == CUDNN_CONVOLUTION_FWD_ALGO_WINOGRAD ||
                         algo == CUDNN_CONVOLUTION_FWD_ALGO_WINOGRAD_NONFUSED ||
                         algo == CUDNN_CONVOLUTION_FWD_ALGO_FFT || algo == CUDNN_CONVOLUTION_FWD_ALGO_FFT_TILING;
  return !transform || TransformsAllowed(p);
}

bool AnyAlgo(const Problem& p, cudnnConvolutionFwdAlgo_t algo) { return AccurateEnough(p, algo); }

bool FusedAlgo(const Problem& p, cudnnConvolutionFwdAlgo_t algo) {
  return AccurateEnough(p, algo) && (p.act != Activation::kIdentity || algo == kIdentityFusedAlgo);
}

// The `algo` values of the space: the supported algorithms `keep` accepts (none when the
// query fails; Applicable says why).
std::vector<std::string> ForwardAlgoValues(const Workload& w, AlgoFilter keep) {
  std::vector<std::string> values;
  StatusOr<const AlgoQuery*> query = QueryAlgorithms(w);
  if (!query.ok()) return values;
  const Problem p = MakeProblem(w);
  for (const SupportedAlgo<cudnnConvolutionFwdAlgo_t>& s : (*query)->forward) {
    if (keep(p, s.algo)) values.emplace_back(std::string(AlgoName(s.algo)));
  }
  return values;
}

// The checks of Applicable shared by the forward implementations: a CUDA target, a
// problem cuDNN can describe, and at least one supported algorithm that `keep` accepts.
Status CheckForward(const Workload& w, const Target& target, AlgoFilter keep) {
  if (target.kind != DeviceKind::kCuda) return absl::InvalidArgumentError("cuDNN needs a CUDA device");
  OPSCHED_RETURN_IF_ERROR(CheckCudnnProblem(MakeProblem(w)));
  OPSCHED_ASSIGN_OR_RETURN(const AlgoQuery* query, QueryAlgorithms(w));
  if (query->forward.empty()) return absl::InvalidArgumentError("cuDNN supports no forward algorithm for this shape");
  if (ForwardAlgoValues(w, keep).empty()) {
    // Only the fused call's identity narrows the algorithms, to one.
    return absl::InvalidArgumentError(fmt::format(
        "the fused cuDNN call runs identity only with {}, which cuDNN does not support for this shape",
        AlgoName(kIdentityFusedAlgo)));
  }
  return absl::OkStatus();
}

// The forward implementations' one knob: cuDNN's algorithm by name, over the supported
// ones `keep` accepts. Required: no algorithm is right for every shape (the rules and
// VendorChoice name one).
struct ForwardKnobs {
  std::string algo;
};
Knobs<ForwardKnobs> ForwardKnobsOf(const Workload& w, AlgoFilter keep) {
  Knobs<ForwardKnobs> knobs;
  knobs.Word("algo", &ForwardKnobs::algo, ForwardAlgoValues(w, keep), KnobPresence::kRequired);
  return knobs;
}

// The workspace of the config's algorithm; 0 when unknown (Prepare reports the error).
size_t ForwardWorkspace(const Workload& w, const Config& config, AlgoFilter keep) {
  StatusOr<ForwardKnobs> knobs = ForwardKnobsOf(w, keep).Parse(config);
  if (!knobs.ok()) return 0;
  StatusOr<cudnnConvolutionFwdAlgo_t> algo = ParseForwardAlgo(knobs->algo);
  StatusOr<const AlgoQuery*> query = QueryAlgorithms(w);
  if (!algo.ok() || !query.ok()) return 0;
  return (*query)->Workspace(*algo).value_or(0);
}

cudaStream_t NativeStream(const PreparedArgs& a) { return static_cast<cudaStream_t>(a.stream.native()); }

// The cuDNN calls of one forward implementation, given the bound problem.
using ForwardCall = Status (*)(cudnnHandle_t handle, const CudnnDescriptors& d, const Problem& p,
                               cudnnConvolutionFwdAlgo_t algo, const PreparedArgs& a);

// A forward implementation prepared for one workload and algorithm: the problem, its
// descriptors and the algorithm's workspace are made once; Run binds the tensors and
// calls cuDNN.
class PreparedForward final : public Prepared {
 public:
  PreparedForward(const Problem& p, cudnnConvolutionFwdAlgo_t algo, size_t workspace_bytes, ForwardCall call)
      : Prepared(workspace_bytes), p_(p), algo_(algo), call_(call) {}
  Status Init() { return d_.Init(p_); }

  Status Run(const PreparedArgs& a) const override {
    if (workspace_bytes() > a.workspace_bytes) {
      return absl::InternalError(fmt::format("cuDNN forward algorithm {} needs {} bytes of workspace, {} given",
                                             AlgoName(algo_), workspace_bytes(), a.workspace_bytes));
    }
    OPSCHED_ASSIGN_OR_RETURN(cudnnHandle_t handle, cudnn::Handle(NativeStream(a)));
    // cuDNN is told the algorithm's own workspace size (as the backward calls are), so
    // what it runs does not depend on how large the caller's buffer has grown.
    const PreparedArgs exact{a.tensors, a.workspace, workspace_bytes(), a.stream, a.error_slot};
    return call_(handle, d_, WithTensors(p_, a.tensors), algo_, exact);
  }

 private:
  const Problem p_;
  CudnnDescriptors d_;
  const cudnnConvolutionFwdAlgo_t algo_;
  const ForwardCall call_;
};

// The config's algorithm, once it is known to be supported (and accepted by `keep`),
// with its descriptors.
StatusOr<std::unique_ptr<Prepared>> PrepareForward(const Workload& w, const Config& config, AlgoFilter keep,
                                                   ForwardCall call) {
  OPSCHED_ASSIGN_OR_RETURN(const ForwardKnobs knobs, ForwardKnobsOf(w, keep).Parse(config));
  const std::string_view name = knobs.algo;
  OPSCHED_ASSIGN_OR_RETURN(cudnnConvolutionFwdAlgo_t algo, ParseForwardAlgo(name));
  OPSCHED_ASSIGN_OR_RETURN(const AlgoQuery* query, QueryAlgorithms(w));
  const std::optional<size_t> needed = query->Workspace(algo);
  if (!needed.has_value()) {
    return absl::UnimplementedError(fmt::format("cuDNN does not support forward algorithm {} for this shape", name));
  }
  const Problem p = MakeProblem(w);
  if (!keep(p, algo)) {
    return absl::UnimplementedError(
        fmt::format("the fused cuDNN call runs identity only with {}", AlgoName(kIdentityFusedAlgo)));
  }
  auto prepared = std::make_unique<PreparedForward>(p, algo, *needed, call);
  OPSCHED_RETURN_IF_ERROR(prepared->Init());
  return cudnn::Replayed(std::move(prepared));
}

// y = conv(x, w), overwriting y.
Status ConvolutionForward(cudnnHandle_t handle, const CudnnDescriptors& d, const Problem& p,
                          cudnnConvolutionFwdAlgo_t algo, const PreparedArgs& a) {
  OPSCHED_CUDNN_RETURN_IF_ERROR(cudnnConvolutionForward(handle, &kOne, d.x(), p.x, d.w(), p.wt, d.conv(), algo,
                                                        a.workspace, a.workspace_bytes, &kZero, d.y(), p.y));
  return absl::OkStatus();
}

// y = act(conv(x, w) + b) in one cuDNN call. The call computes
// act(alpha1 * conv + alpha2 * z + bias); alpha2 = 0 with z = y leaves z out (checked
// with cuDNN 9.19 on an H100: a NaN-filled y, as the tuner poisons outputs, does not
// leak into the result).
Status FusedForward(cudnnHandle_t handle, const CudnnDescriptors& d, const Problem& p,
                    cudnnConvolutionFwdAlgo_t algo, const PreparedArgs& a) {
  OPSCHED_CUDNN_RETURN_IF_ERROR(cudnnConvolutionBiasActivationForward(
      handle, &kOne, d.x(), p.x, d.w(), p.wt, d.conv(), algo, a.workspace, a.workspace_bytes, &kZero, d.y(), p.y,
      d.bias(), p.b, d.act(), d.y(), p.y));
  return absl::OkStatus();
}

// y = act(conv(x, w) + b) in three cuDNN calls on one stream.
Status UnfusedForward(cudnnHandle_t handle, const CudnnDescriptors& d, const Problem& p,
                      cudnnConvolutionFwdAlgo_t algo, const PreparedArgs& a) {
  OPSCHED_RETURN_IF_ERROR(ConvolutionForward(handle, d, p, algo, a));
  // y = 1 * b (broadcast over n, p, q) + 1 * y.
  OPSCHED_CUDNN_RETURN_IF_ERROR(cudnnAddTensor(handle, &kOne, d.bias(), p.b, &kOne, d.y(), p.y));
  // cudnnActivationForward rejects identity (it exists for the fused call only), and
  // identity has nothing left to do.
  if (p.act == Activation::kIdentity) return absl::OkStatus();
  // In place: cuDNN documents x == y with equal descriptors as supported.
  OPSCHED_CUDNN_RETURN_IF_ERROR(cudnnActivationForward(handle, d.act(), &kOne, d.y(), p.y, &kZero, d.y(), p.y));
  return absl::OkStatus();
}

// What the three implementations share: device, traits, the `algo` knob over the
// algorithms `keep` accepts, its workspace, and Prepare/Run through `call`.
template <AlgoFilter kKeep, ForwardCall kCall>
class ForwardCudnnBase : public Implementation {
 public:
  DeviceKind device_kind() const override { return DeviceKind::kCuda; }
  ImplementationTraits traits() const override {
    return {.deterministic = true, .vendor_library = true, .uses_cublas = true, .uses_cudnn = true};
  }
  size_t WorkspaceBytes(const Workload& w, const Config& config) const override {
    return ForwardWorkspace(w, config, kKeep);
  }
  ConfigSpace Space(const Workload& w, const Target&) const override { return ForwardKnobsOf(w, kKeep).Space(); }
  StatusOr<std::unique_ptr<Prepared>> Prepare(const Workload& w, const Config& config, const Target&) const override {
    return PrepareForward(w, config, kKeep, kCall);
  }
  Status Run(const RunArgs& a) const override { return PrepareAndRun(*this, a); }
};

// cuDNN's heuristic forward algorithm as a config of an `algo` implementation that
// takes the algorithms `keep` accepts.
StatusOr<Config> HeuristicForward(const Workload& w, AlgoFilter keep) {
  OPSCHED_ASSIGN_OR_RETURN(const AlgoQuery* query, QueryAlgorithms(w));
  if (!query->heuristic_forward) return absl::NotFoundError("cuDNN's heuristic suggests no supported algorithm");
  if (!keep(MakeProblem(w), *query->heuristic_forward)) {
    return absl::NotFoundError(fmt::format("this call does not take cuDNN's heuristic algorithm {} here",
                                           AlgoName(*query->heuristic_forward)));
  }
  return Config().Set("algo", std::string(AlgoName(*query->heuristic_forward)));
}

class Conv2dCudnn : public ForwardCudnnBase<AnyAlgo, ConvolutionForward> {
 public:
  std::string_view op() const override { return "conv2d"; }
  std::string_view name() const override { return "conv2d_cudnn"; }
  Status Applicable(const Workload& w, const Target& target) const override {
    return CheckForward(w, target, AnyAlgo);
  }
  StatusOr<Config> VendorChoice(const Workload& w, const Target&) const override { return HeuristicForward(w, AnyAlgo); }
};

class Conv2dBiasActCudnn : public ForwardCudnnBase<FusedAlgo, FusedForward> {
 public:
  std::string_view op() const override { return "conv2d_bias_act"; }
  std::string_view name() const override { return "conv2d_bias_act_cudnn"; }
  Status Applicable(const Workload& w, const Target& target) const override {
    const Problem p = MakeProblem(w);
    if (p.act != Activation::kRelu && p.act != Activation::kIdentity) {
      return absl::InvalidArgumentError(fmt::format(
          "cudnnConvolutionBiasActivationForward serves relu and identity, not {}", ActivationName(p.act)));
    }
    // cuDNN's fused bias is a packed [1,K,1,1] tensor.
    if (p.k > 1 && p.b_stride != 1) return absl::InvalidArgumentError("the fused cuDNN call needs a contiguous b");
    return CheckForward(w, target, FusedAlgo);
  }
  // cuDNN's heuristic algorithm, fused where the fused call takes it: the same
  // convolution as the unfused pick, less two passes over y (the unfused implementation
  // is next in line when the fused call refuses the algorithm or the activation).
  StatusOr<Config> VendorChoice(const Workload& w, const Target&) const override {
    return HeuristicForward(w, FusedAlgo);
  }
};

// Serves the activations and algorithms the fused call refuses, at the cost of two more
// passes over y.
class Conv2dBiasActCudnnUnfused : public ForwardCudnnBase<AnyAlgo, UnfusedForward> {
 public:
  std::string_view op() const override { return "conv2d_bias_act"; }
  std::string_view name() const override { return "conv2d_bias_act_cudnn_unfused"; }
  Status Applicable(const Workload& w, const Target& target) const override {
    return CheckForward(w, target, AnyAlgo);
  }
  // A framework without fusion: cuDNN's heuristic convolution, then bias, then activation
  // (the vendor floor where the fused call refuses the algorithm or the activation).
  StatusOr<Config> VendorChoice(const Workload& w, const Target&) const override { return HeuristicForward(w, AnyAlgo); }
};

}  // namespace

Status RegisterCudnn(Registry& registry) {
  OPSCHED_RETURN_IF_ERROR(registry.AddImplementation(std::make_unique<Conv2dCudnn>()));
  OPSCHED_RETURN_IF_ERROR(registry.AddImplementation(std::make_unique<Conv2dBiasActCudnn>()));
  OPSCHED_RETURN_IF_ERROR(registry.AddImplementation(std::make_unique<Conv2dBiasActCudnnUnfused>()));
  return absl::OkStatus();
}

}  // namespace opsched::conv2d
