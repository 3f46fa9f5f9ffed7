#include "tuner/trial.h"

#include <cstring>

#include "core/format.h"
#include "core/gpu/gpu_backend.h"
#include "core/gpu/verify.h"
#include "tuner/memory_need.h"

namespace opsched {

StatusOr<Verification> ParseVerification(std::string_view name) {
  if (name == "auto") return Verification::kAuto;
  if (name == "host") return Verification::kHost;
  if (name == "device") return Verification::kDevice;
  return absl::InvalidArgumentError(fmt::format("unknown verification '{}' (auto, host or device)", name));
}

std::string_view VerificationName(Verification v) {
  switch (v) {
    case Verification::kHost: return "host";
    case Verification::kDevice: return "device";
    default: return "auto";
  }
}

StatusOr<std::unique_ptr<Trial>> Trial::Create(const Registry& registry,
                                               const Workload& canonical, const Target& target,
                                               const TrialOptions& options) {
  std::unique_ptr<Trial> t(new Trial());
  t->op_ = registry.FindOp(canonical.op());
  if (t->op_ == nullptr) return absl::NotFoundError(fmt::format("unknown op '{}'", canonical.op()));
  OPSCHED_RETURN_IF_ERROR(CheckMemoryNeed(*t->op_, canonical, target));
  t->workload_ = canonical;
  t->target_ = target;
  t->options_ = options;
  const Device device = target.device();
  if (options.verification != Verification::kHost && target.kind != DeviceKind::kCpu) {
    t->device_verification_ = registry.FindDeviceVerification(canonical.op());
  }
  if (options.verification == Verification::kDevice && t->device_verification_ == nullptr) {
    return absl::FailedPreconditionError(fmt::format(
        "{} has no device verification for {} in this build", canonical.op(), target.device().ToString()));
  }
  OPSCHED_ASSIGN_OR_RETURN(t->stream_, Stream::Create(device));
  t->slots_ = std::make_unique<ErrorSlotPool>(device);
  OPSCHED_ASSIGN_OR_RETURN(t->slot_, t->slots_->Acquire());
  t->output_descs_ = t->op_->OutputDescs(canonical);
  if (options.in_place && (t->output_descs_.empty() || t->output_descs_[0] != canonical.tensors()[0].desc)) {
    return absl::InvalidArgumentError("in place needs the first output shaped like the first input");
  }
  const bool host = !t->verifies_on_device();
  if (host) {
    for (const TensorArg& arg : canonical.tensors()) t->inputs_.emplace_back(arg.desc);
    for (const TensorDesc& d : t->output_descs_) t->outputs_.emplace_back(d);
    std::mt19937_64 rng(options.seed);
    OPSCHED_RETURN_IF_ERROR(t->op_->Generate(canonical, options.generator, rng, &t->inputs_));
  }
  for (const TensorArg& arg : canonical.tensors()) {
    // At least one byte so that every tensor has a distinct non-null address.
    OPSCHED_ASSIGN_OR_RETURN(Buffer b, Buffer::Allocate(device, std::max<int64_t>(arg.desc.storage_bytes(), 1)));
    t->tensors_.push_back(Tensor{arg.desc, b.data(), device});
    t->input_buffers_.push_back(std::move(b));
  }
  for (size_t i = 0; i < t->output_descs_.size(); ++i) {
    const TensorDesc& d = t->output_descs_[i];
    if (i == 0 && options.in_place) {
      t->tensors_.push_back(t->tensors_[0]);
      continue;
    }
    OPSCHED_ASSIGN_OR_RETURN(Buffer b, Buffer::Allocate(device, std::max<int64_t>(d.storage_bytes(), 1)));
    t->tensors_.push_back(Tensor{d, b.data(), device});
    t->output_buffers_.push_back(std::move(b));
  }
  if (host) {
    OPSCHED_RETURN_IF_ERROR(t->Upload());
    return t;
  }
  const size_t inputs = canonical.tensors().size();
  const absl::Span<const Tensor> in = absl::MakeConstSpan(t->tensors_).subspan(0, inputs);
  OPSCHED_RETURN_IF_ERROR(
      t->device_verification_->Generate(canonical, options.generator, options.seed, in, t->stream_));
  if (options.in_place) {
    OPSCHED_ASSIGN_OR_RETURN(t->pristine_, Buffer::Allocate(device, t->input_buffers_[0].size()));
    OPSCHED_RETURN_IF_ERROR(gpu::MemcpyAsync(t->pristine_.data(), t->input_buffers_[0].data(),
                                             t->input_buffers_[0].size(), t->stream_.native()));
  }
  for (const Tensor& tensor : in) {
    OPSCHED_ASSIGN_OR_RETURN(uint64_t fingerprint, gpu::Fingerprint(tensor, t->stream_.native()));
    t->input_fingerprints_.push_back(fingerprint);
  }
  return t;
}

Status Trial::Upload() {
  if (verifies_on_device()) {
    return absl::FailedPreconditionError("the inputs of a device-verified trial are made on the device");
  }
  OPSCHED_RETURN_IF_ERROR(stream_.Synchronize());  // no queued work may still read them
  reference_ready_ = false;
  for (size_t i = 0; i < inputs_.size(); ++i) {
    OPSCHED_RETURN_IF_ERROR(input_buffers_[i].CopyFromHost(inputs_[i].data(), inputs_[i].storage_bytes()));
  }
  return absl::OkStatus();
}

Status Trial::DownloadInputs() {
  OPSCHED_RETURN_IF_ERROR(stream_.Synchronize());
  if (options_.in_place && verifies_on_device()) {
    // The first input as generated, not as a run left it.
    OPSCHED_RETURN_IF_ERROR(gpu::MemcpyAsync(input_buffers_[0].data(), pristine_.data(), pristine_.size(),
                                             stream_.native()));
    OPSCHED_RETURN_IF_ERROR(stream_.Synchronize());
  }
  inputs_.clear();
  for (size_t i = 0; i < workload_.tensors().size(); ++i) {
    inputs_.emplace_back(workload_.tensors()[i].desc);
    OPSCHED_RETURN_IF_ERROR(input_buffers_[i].CopyToHost(inputs_[i].data(), inputs_[i].storage_bytes()));
  }
  return absl::OkStatus();
}

Status Trial::Poison() {
  OPSCHED_RETURN_IF_ERROR(stream_.Synchronize());  // earlier launches are done with them
  // 0xFF bytes: NaN in every float type, -1 in integers — never a valid result.
  if (options_.in_place) {
    if (verifies_on_device()) {
      OPSCHED_RETURN_IF_ERROR(gpu::MemcpyAsync(input_buffers_[0].data(), pristine_.data(), pristine_.size(),
                                               stream_.native()));
    } else {
      OPSCHED_RETURN_IF_ERROR(input_buffers_[0].CopyFromHost(inputs_[0].data(), inputs_[0].storage_bytes()));
    }
  }
  for (Buffer& b : output_buffers_) {
    if (b.device().is_cpu()) {
      std::memset(b.data(), 0xff, b.size());
    } else {
      OPSCHED_RETURN_IF_ERROR(gpu::MemsetAsync(b.data(), 0xff, b.size(), stream_.native()));
    }
  }
  return stream_.Synchronize();
}

Status Trial::Prepare(const Implementation& impl, const Config& config) {
  if (prepared_ == nullptr || prepared_impl_ != &impl || !(prepared_config_ == config)) {
    prepared_.reset();
    if (target_.kind != DeviceKind::kCpu) OPSCHED_RETURN_IF_ERROR(gpu::SetDevice(target_.device()));
    OPSCHED_ASSIGN_OR_RETURN(prepared_, impl.Prepare(workload_, config, target_));
    prepared_impl_ = &impl;
    prepared_config_ = config;
  }
  const size_t bytes = prepared_->workspace_bytes();
  if (bytes > workspace_.size()) {
    workspace_.Reset();
    OPSCHED_ASSIGN_OR_RETURN(workspace_, Buffer::Allocate(target_.device(), bytes));
  }
  return absl::OkStatus();
}

Status Trial::Launch(const Implementation& impl, const Config& config) {
  OPSCHED_RETURN_IF_ERROR(Prepare(impl, config));
  if (target_.kind != DeviceKind::kCpu) OPSCHED_RETURN_IF_ERROR(gpu::SetDevice(target_.device()));
  return prepared_->Run(PreparedArgs{tensors_, workspace_.data(), workspace_.size(),
                          stream_, impl.ReportsDeviceErrors() ? slot_ : ErrorSlot{}});
}

Status Trial::Run(const Implementation& impl, const Config& config) {
  OPSCHED_RETURN_IF_ERROR(Poison());
  slot_.host->state = kSlotPending;
  OPSCHED_RETURN_IF_ERROR(Launch(impl, config));
  OPSCHED_RETURN_IF_ERROR(stream_.Synchronize());
  if (impl.ReportsDeviceErrors() && SlotState(slot_) == kSlotError) {
    return op_->DeviceError(workload_, slot_.host->position, slot_.host->value);
  }
  if (verifies_on_device()) return absl::OkStatus();  // outputs are checked where they are
  const size_t first_output = inputs_.size();
  for (size_t i = 0; i < outputs_.size(); ++i) {
    const Tensor& t = tensors_[first_output + i];
    if (t.device.is_cpu()) {
      if (outputs_[i].storage_bytes() > 0) std::memcpy(outputs_[i].data(), t.data, outputs_[i].storage_bytes());
    } else {
      OPSCHED_RETURN_IF_ERROR(gpu::MemcpyAsync(outputs_[i].data(), t.data,
                                               outputs_[i].storage_bytes(), stream_.native()));
    }
  }
  return stream_.Synchronize();
}

StatusOr<const DeviceReference*> Trial::DeviceRef() {
  if (!verifies_on_device()) return absl::FailedPreconditionError("this trial verifies on the host");
  if (device_reference_ == nullptr) {
    if (options_.in_place) OPSCHED_RETURN_IF_ERROR(Poison());  // the first input as generated
    const absl::Span<const Tensor> in = absl::MakeConstSpan(tensors_).subspan(0, workload_.tensors().size());
    OPSCHED_ASSIGN_OR_RETURN(device_reference_, device_verification_->Reference(workload_, in, stream_));
  }
  return device_reference_.get();
}

StatusOr<const std::vector<std::vector<double>>*> Trial::Reference() {
  if (!reference_ready_) {
    if (verifies_on_device()) {
      OPSCHED_ASSIGN_OR_RETURN(const DeviceReference* device, DeviceRef());
      OPSCHED_ASSIGN_OR_RETURN(reference_, device->Download(stream_));
    } else {
      OPSCHED_ASSIGN_OR_RETURN(reference_, op_->Reference(workload_, inputs_));
      check_context_ = op_->PrepareCheck(workload_, inputs_);
    }
    reference_ready_ = true;
  }
  return &reference_;
}

Status Trial::Check(const Implementation& impl) {
  if (verifies_on_device()) {
    OPSCHED_ASSIGN_OR_RETURN(const DeviceReference* device, DeviceRef());
    return device->Check(OutputTensors(), impl.traits().deterministic, stream_);
  }
  OPSCHED_ASSIGN_OR_RETURN(const auto* reference, Reference());
  return op_->Check(workload_, inputs_, outputs_, *reference, impl.traits().deterministic,
                    check_context_.get());
}

Status Trial::CheckInputsUnchanged() const {
  const size_t first = options_.in_place ? 1 : 0;
  if (verifies_on_device()) {
    for (size_t i = first; i < input_fingerprints_.size(); ++i) {
      OPSCHED_ASSIGN_OR_RETURN(uint64_t now, gpu::Fingerprint(tensors_[i], stream_.native()));
      if (now != input_fingerprints_[i]) {
        return absl::DataLossError(fmt::format("input '{}' was modified", workload_.tensors()[i].name));
      }
    }
    return absl::OkStatus();
  }
  for (size_t i = first; i < inputs_.size(); ++i) {
    std::vector<uint8_t> now(inputs_[i].storage_bytes());
    OPSCHED_RETURN_IF_ERROR(input_buffers_[i].CopyToHost(now.data(), now.size()));
    if (!now.empty() && std::memcmp(now.data(), inputs_[i].data(), now.size()) != 0) {
      return absl::DataLossError(fmt::format("input '{}' was modified",
                                             workload_.tensors()[i].name));
    }
  }
  return absl::OkStatus();
}

}  // namespace opsched
