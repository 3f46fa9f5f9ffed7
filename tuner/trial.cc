#include "tuner/trial.h"

#include <cstring>

#include "core/format.h"
#include "core/gpu/gpu_backend.h"
#include "tuner/memory_need.h"

namespace opsched {

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
  OPSCHED_ASSIGN_OR_RETURN(t->stream_, Stream::Create(device));
  t->slots_ = std::make_unique<ErrorSlotPool>(device);
  OPSCHED_ASSIGN_OR_RETURN(t->slot_, t->slots_->Acquire());
  for (const TensorArg& arg : canonical.tensors()) t->inputs_.emplace_back(arg.desc);
  const std::vector<TensorDesc> outs = t->op_->OutputDescs(canonical);
  if (options.in_place && (outs.empty() || outs[0] != canonical.tensors()[0].desc)) {
    return absl::InvalidArgumentError("in place needs the first output shaped like the first input");
  }
  for (const TensorDesc& d : outs) t->outputs_.emplace_back(d);
  std::mt19937_64 rng(options.seed);
  OPSCHED_RETURN_IF_ERROR(t->op_->Generate(canonical, options.generator, rng, &t->inputs_));
  for (const HostTensor& h : t->inputs_) {
    // At least one byte so that every tensor has a distinct non-null address.
    OPSCHED_ASSIGN_OR_RETURN(Buffer b, Buffer::Allocate(device, std::max<size_t>(h.storage_bytes(), 1)));
    t->tensors_.push_back(Tensor{h.desc(), b.data(), device});
    t->input_buffers_.push_back(std::move(b));
  }
  for (size_t i = 0; i < t->outputs_.size(); ++i) {
    const HostTensor& h = t->outputs_[i];
    if (i == 0 && options.in_place) {
      t->tensors_.push_back(t->tensors_[0]);
      continue;
    }
    OPSCHED_ASSIGN_OR_RETURN(Buffer b, Buffer::Allocate(device, std::max<size_t>(h.storage_bytes(), 1)));
    t->tensors_.push_back(Tensor{h.desc(), b.data(), device});
    t->output_buffers_.push_back(std::move(b));
  }
  OPSCHED_RETURN_IF_ERROR(t->Upload());
  return t;
}

Status Trial::Upload() {
  OPSCHED_RETURN_IF_ERROR(stream_.Synchronize());  // no queued work may still read them
  reference_ready_ = false;
  for (size_t i = 0; i < inputs_.size(); ++i) {
    OPSCHED_RETURN_IF_ERROR(input_buffers_[i].CopyFromHost(inputs_[i].data(), inputs_[i].storage_bytes()));
  }
  return absl::OkStatus();
}

Status Trial::Poison() {
  OPSCHED_RETURN_IF_ERROR(stream_.Synchronize());  // earlier launches are done with them
  // 0xFF bytes: NaN in every float type, -1 in integers — never a valid result.
  if (options_.in_place) {
    OPSCHED_RETURN_IF_ERROR(input_buffers_[0].CopyFromHost(inputs_[0].data(), inputs_[0].storage_bytes()));
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

Status Trial::PrepareWorkspace(const Implementation& impl, const Config& config) {
  const size_t bytes = impl.WorkspaceBytes(workload_, config);
  if (bytes > workspace_.size()) {
    workspace_.Reset();
    OPSCHED_ASSIGN_OR_RETURN(workspace_, Buffer::Allocate(target_.device(), bytes));
  }
  return absl::OkStatus();
}

Status Trial::Launch(const Implementation& impl, const Config& config) {
  OPSCHED_RETURN_IF_ERROR(PrepareWorkspace(impl, config));
  if (target_.kind != DeviceKind::kCpu) OPSCHED_RETURN_IF_ERROR(gpu::SetDevice(target_.device()));
  return impl.Run(RunArgs{workload_, tensors_, config, workspace_.data(), workspace_.size(),
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

StatusOr<const std::vector<std::vector<double>>*> Trial::Reference() {
  if (!reference_ready_) {
    OPSCHED_ASSIGN_OR_RETURN(reference_, op_->Reference(workload_, inputs_));
    check_context_ = op_->PrepareCheck(workload_, inputs_);
    reference_ready_ = true;
  }
  return &reference_;
}

Status Trial::Check(const Implementation& impl) {
  OPSCHED_ASSIGN_OR_RETURN(const auto* reference, Reference());
  return op_->Check(workload_, inputs_, outputs_, *reference, impl.traits().deterministic,
                    check_context_.get());
}

Status Trial::CheckInputsUnchanged() const {
  for (size_t i = options_.in_place ? 1 : 0; i < inputs_.size(); ++i) {
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
