// The pointwise op's device-side verification (registry/device_verification.h): inputs
// generated on the GPU like PointwiseOpDef::Generate (from the same ranges, kInputLow or
// kPositiveLow up to kInputHigh, and the requested fraction of NaN and infinities), the
// float64 reference and its bounds there (pointwise_cuda_reference.cu), and each output
// compared under CheckBound, as the CPU check does, naming the first mismatch in the same
// words (MismatchError).
#include <algorithm>
#include <set>

#include "core/buffer.h"
#include "core/format.h"
#include "core/gpu/gpu_backend.h"
#include "core/gpu/gpu_status.h"
#include "core/gpu/verify.h"
#include "ops/pointwise/pointwise_cuda_reference.h"
#include "ops/pointwise/pointwise_def.h"
#include "ops/pointwise/pointwise_math.h"
#include "ops/pointwise/pointwise_register.h"
#include "registry/registry.h"

namespace opsched::pointwise {
namespace {

using gpu_reference::Node;

// Stack entries that evaluating `e` needs when the child needing more goes first: a
// constant takes one, like a load.
int Depth(const Expr& e) { return Need(e, 1); }

void Flatten(const Expr& e, const std::vector<std::string>& inputs, std::vector<Node>* out) {
  Node node;
  node.op = static_cast<int32_t>(e.op);
  if (e.op == OpCode::kLoad) {
    const auto it = std::find(inputs.begin(), inputs.end(), e.name);
    node.arg = it == inputs.end() ? -1 : static_cast<int32_t>(it - inputs.begin());
  } else if (e.op == OpCode::kConst) {
    node.value = e.value;
  } else if (IsBinary(e.op)) {
    const bool second_first = Depth(e.args[1]) > Depth(e.args[0]);
    Flatten(e.args[second_first ? 1 : 0], inputs, out);
    Flatten(e.args[second_first ? 0 : 1], inputs, out);
    node.arg = second_first ? 1 : 0;
  } else {
    Flatten(e.args[0], inputs, out);
  }
  out->push_back(node);
}

class PointwiseDeviceReference : public DeviceReference {
 public:
  static StatusOr<std::unique_ptr<PointwiseDeviceReference>> Create(const Workload& w,
                                                                    absl::Span<const Tensor> inputs,
                                                                    const Stream& stream) {
    OPSCHED_ASSIGN_OR_RETURN(std::shared_ptr<const Compiled> c, CompiledFor(w));
    auto r = std::unique_ptr<PointwiseDeviceReference>(new PointwiseDeviceReference());
    r->compiled_ = c;
    const Program& p = c->program;
    if (p.outputs.size() > static_cast<size_t>(gpu_reference::kMaxOutputs) || inputs.size() != p.inputs.size()) {
      return absl::InvalidArgumentError(fmt::format("pointwise: {} outputs and {} inputs for the device reference",
                                                    p.outputs.size(), inputs.size()));
    }
    gpu_reference::Problem& pr = r->problem_;
    const Dims& shape = c->outputs[0].shape();
    pr.rank = static_cast<int32_t>(shape.size());
    pr.numel = 1;
    for (size_t d = 0; d < shape.size(); ++d) {
      pr.shape[d] = shape[d];
      pr.numel *= shape[d];
    }
    pr.num_outputs = static_cast<int32_t>(p.outputs.size());
    for (size_t o = 0; o < p.values.size(); ++o) {
      if (Depth(p.values[o]) > gpu_reference::kMaxStack) {
        return absl::InvalidArgumentError(fmt::format("pointwise: output '{}' is too deep for the device reference",
                                                      p.outputs[o]));
      }
      Flatten(p.values[o], p.inputs, &r->nodes_);
      pr.begin[o + 1] = static_cast<int32_t>(r->nodes_.size());
    }
    for (const Tensor& t : inputs) r->inputs_.push_back(gpu::ToRef(t));
    // [values of every output][bounds of every output][input descriptors][nodes]
    const size_t doubles = 2 * static_cast<size_t>(pr.numel) * p.outputs.size();
    const size_t input_bytes = r->inputs_.size() * sizeof(gpu::RefTensor);
    const size_t node_bytes = r->nodes_.size() * sizeof(Node);
    OPSCHED_ASSIGN_OR_RETURN(r->memory_, Buffer::Allocate(stream.device(), std::max<size_t>(
                                                              doubles * sizeof(double) + input_bytes + node_bytes, 16)));
    char* base = static_cast<char*>(r->memory_.data());
    r->values_ = reinterpret_cast<double*>(base);
    r->bounds_ = r->values_ + pr.numel * static_cast<int64_t>(p.outputs.size());
    auto* device_inputs = reinterpret_cast<gpu::RefTensor*>(base + doubles * sizeof(double));
    auto* device_nodes = reinterpret_cast<Node*>(base + doubles * sizeof(double) + input_bytes);
    pr.inputs = device_inputs;
    pr.nodes = device_nodes;
    // The host copies stay alive with the reference until the stream has read them.
    if (input_bytes > 0) {
      OPSCHED_RETURN_IF_ERROR(gpu::MemcpyAsync(device_inputs, r->inputs_.data(), input_bytes, stream.native()));
    }
    OPSCHED_RETURN_IF_ERROR(gpu::MemcpyAsync(device_nodes, r->nodes_.data(), node_bytes, stream.native()));
    OPSCHED_RETURN_IF_ERROR(gpu::ToStatus(
        gpu_reference::LaunchReference(pr, r->values_, r->bounds_, static_cast<gpuStream_t>(stream.native())),
        "pointwise reference"));
    return r;
  }

  Status Check(absl::Span<const Tensor> outputs, bool, const Stream& stream) const override {
    const Program& p = compiled_->program;
    if (outputs.size() != p.outputs.size()) return absl::InternalError("pointwise: output counts differ");
    for (size_t o = 0; o < outputs.size(); ++o) {
      const CloseBound bound = CheckBound(outputs[o].desc.dtype());
      OPSCHED_ASSIGN_OR_RETURN(gpu::Mismatch m, gpu::CompareClose(outputs[o], values_ + o * problem_.numel,
                                                                  bounds_ + o * problem_.numel, 0, bound,
                                                                  stream.native()));
      if (m.count == 0) continue;
      const Status error = MismatchError(p, o, m.first, m.got, m.want, bound.Tolerance(m.magnitude, 0, m.want));
      return absl::DataLossError(fmt::format("{} [device check: {} of {} elements of {} differ]", Message(error),
                                             m.count, problem_.numel, p.outputs[o]));
    }
    return absl::OkStatus();
  }

  StatusOr<std::vector<std::vector<double>>> Download(const Stream& stream) const override {
    std::vector<std::vector<double>> out(static_cast<size_t>(problem_.num_outputs));
    for (size_t o = 0; o < out.size(); ++o) {
      out[o].resize(static_cast<size_t>(problem_.numel));
      OPSCHED_RETURN_IF_ERROR(
          gpu::ReadDoubles(values_ + o * problem_.numel, problem_.numel, out[o].data(), stream.native()));
    }
    return out;
  }

 private:
  PointwiseDeviceReference() = default;

  std::shared_ptr<const Compiled> compiled_;
  gpu_reference::Problem problem_;
  std::vector<gpu::RefTensor> inputs_;
  std::vector<Node> nodes_;
  double* values_ = nullptr;
  double* bounds_ = nullptr;
  Buffer memory_;
};

class PointwiseDeviceVerification : public DeviceVerification {
 public:
  std::string_view op() const override { return "pointwise"; }

  Status Generate(const Workload& w, const GeneratorOptions& options, uint64_t seed, absl::Span<const Tensor> inputs,
                  const Stream& stream) const override {
    OPSCHED_ASSIGN_OR_RETURN(std::shared_ptr<const Compiled> c, CompiledFor(w));
    const std::set<std::string> positive = PositiveInputs(c->program);
    for (size_t t = 0; t < inputs.size(); ++t) {
      gpu::FillOptions fill;
      fill.lo = positive.count(c->program.inputs[t]) ? kPositiveLow : kInputLow;
      fill.hi = kInputHigh;
      fill.special_fraction = options.special_value_fraction;
      OPSCHED_RETURN_IF_ERROR(gpu::Fill(inputs[t], seed, t, fill, stream.native()));
    }
    return absl::OkStatus();
  }

  StatusOr<std::unique_ptr<DeviceReference>> Reference(const Workload& w, absl::Span<const Tensor> inputs,
                                                       const Stream& stream) const override {
    OPSCHED_ASSIGN_OR_RETURN(std::unique_ptr<PointwiseDeviceReference> r,
                             PointwiseDeviceReference::Create(w, inputs, stream));
    return std::unique_ptr<DeviceReference>(std::move(r));
  }
};

}  // namespace

Status RegisterDeviceVerification(Registry& registry) {
  return registry.AddDeviceVerification(std::make_unique<PointwiseDeviceVerification>());
}

}  // namespace opsched::pointwise
