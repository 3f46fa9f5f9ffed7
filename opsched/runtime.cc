#include "opsched/runtime.h"

#include "core/data_error.h"
#include "core/format.h"

#include "core/gpu/gpu_backend.h"
#include "core/log.h"

namespace opsched {

StatusOr<std::unique_ptr<Runtime>> Runtime::Create(RuntimeOptions options) {
  std::unique_ptr<Runtime> rt(new Runtime());
  Target target = options.target ? *options.target : DefaultTarget();
  rt->db_ = std::make_unique<records::Database>();
  for (const std::string& path : options.record_files) {
    OPSCHED_RETURN_IF_ERROR(Annotate(rt->db_->Load(path), "loading records"));
  }
  rt->records_note_ = records::NoRecordsForTargetNote(*rt->db_, target, options.dispatch.allow_transferred_records);
  const Registry& registry = options.registry ? *options.registry : Registry::Global();
  rt->registry_ = &registry;
  if (!options.model_file.empty()) {
    StatusOr<std::unique_ptr<Selector>> selector = Selector::Load(options.model_file);
    Status usable = selector.ok() ? (*selector)->Serves(target, options.dispatch.allow_transferred_records)
                                  : selector.status();
    if (usable.ok()) {
      rt->selector_ = *std::move(selector);
    } else {
      rt->model_status_ = Annotate(usable, fmt::format("selector model {} not used", options.model_file));
      Log().error("{}", rt->model_status_.message());
    }
  }
  rt->dispatcher_ = std::make_unique<Dispatcher>(registry, std::move(target), rt->db_.get(), options.dispatch,
                                                 rt->selector_.get());
  if (!options.record_untuned_file.empty()) {
    OPSCHED_ASSIGN_OR_RETURN(rt->untuned_, UntunedRecorder::Open(options.record_untuned_file));
    rt->dispatcher_->set_observer([recorder = rt->untuned_.get()](const CachedDecision& entry) {
      if (entry.decision.provenance == Provenance::kExactRecord) return;
      StatusOr<bool> noted = recorder->Note(entry.canonical.ToString());
      // Serving goes on without the file: a full disk must not fail the op.
      if (!noted.ok()) Log().warn("{}", noted.status().message());
    });
  }
  rt->device_errors_ = options.device_errors;
  rt->slots_ = std::make_unique<ErrorSlotPool>(rt->target().device());
  if (options.allocator != nullptr) {
    rt->allocator_ = options.allocator;
  } else {
    rt->owned_allocator_ = std::make_unique<CachingWorkspaceAllocator>();
    rt->allocator_ = rt->owned_allocator_.get();
  }
  return rt;
}

Status Runtime::Validate(const CachedDecision& entry, absl::Span<const Tensor> tensors,
                         const Stream& stream) const {
  const Workload& w = entry.canonical;
  if (tensors.size() != entry.expected.size()) {
    return absl::InvalidArgumentError(fmt::format("{} takes {} tensors (inputs then outputs), got {}",
                                                  w.op(), entry.expected.size(), tensors.size()));
  }
  const Device device = target().device();
  if (stream.device() != device) {
    return absl::InvalidArgumentError(fmt::format("{}: stream is on {}, the target is {}", w.op(),
                                                  stream.device().ToString(), device.ToString()));
  }
  const size_t inputs = w.tensors().size();
  for (size_t i = 0; i < tensors.size(); ++i) {
    const Tensor& t = tensors[i];
    const TensorDesc& want = entry.expected[i];
    if (t.desc != want) {
      return absl::InvalidArgumentError(fmt::format(
          "{}: tensor {} is {} but the workload has {}", w.op(), i, t.desc.ToString(),
          want.ToString()));
    }
    if (t.device != device) {
      return absl::InvalidArgumentError(fmt::format("{}: tensor {} is on {}, the target is {}",
                                                    w.op(), i, t.device.ToString(),
                                                    device.ToString()));
    }
    if (t.data == nullptr && t.desc.numel() > 0) {
      return absl::InvalidArgumentError(fmt::format("{}: tensor {} has no data", w.op(), i));
    }
  }
  // Outputs must not overlap inputs, except an output that is exactly the first input
  // (in place) for implementations that support it.
  const bool in_place_ok = entry.decision.implementation->traits().in_place;
  for (size_t o = inputs; o < tensors.size(); ++o) {
    if (!tensors[o].desc.is_non_overlapping()) {
      return absl::InvalidArgumentError(
          fmt::format("{}: output {} has overlapping strides", w.op(), o - inputs));
    }
    for (size_t i = 0; i < tensors.size(); ++i) {
      if (i == o || !tensors[o].Overlaps(tensors[i])) continue;
      const bool exact_alias = i == 0 && tensors[i].data == tensors[o].data &&
                               tensors[i].desc == tensors[o].desc;
      if (!(exact_alias && in_place_ok)) {
        return absl::InvalidArgumentError(fmt::format(
            "{}: output {} overlaps tensor {}{}", w.op(), o - inputs, i,
            exact_alias ? fmt::format(" and {} does not run in place",
                                      entry.decision.implementation->name())
                        : ""));
      }
    }
  }
  return absl::OkStatus();
}

Status Runtime::Run(const Workload& workload, absl::Span<const Tensor> tensors,
                    const Stream& stream) {
  OPSCHED_ASSIGN_OR_RETURN(const CachedDecision* entry, dispatcher_->Decide(workload));
  OPSCHED_RETURN_IF_ERROR(Validate(*entry, tensors, stream));
  const Decision& d = entry->decision;
  void* workspace = nullptr;
  if (d.workspace_bytes > 0) {
    OPSCHED_ASSIGN_OR_RETURN(workspace, allocator_->Get(stream, d.workspace_bytes));
  }
  if (target().kind != DeviceKind::kCpu) OPSCHED_RETURN_IF_ERROR(gpu::SetDevice(target().device()));
  const bool checks = d.implementation->ReportsDeviceErrors();
  ErrorSlot slot;
  if (checks) {
    if (calls_since_poll_.fetch_add(1, std::memory_order_relaxed) + 1 >= kChecksPerEpoch) {
      calls_since_poll_.store(0, std::memory_order_relaxed);
      PollPending(nullptr);
    }
    OPSCHED_ASSIGN_OR_RETURN(slot, slots_->Acquire());
  }
  Status s = d.implementation->Run(
      RunArgs{entry->canonical, tensors, d.config, workspace, d.workspace_bytes, stream, slot});
  if (!checks) {
    if (s.ok()) return s;
    // A CPU implementation returns a data error from Run; deferred, it is held for
    // Synchronize() exactly like an error a device kernel reports.
    if (device_errors_ == DeviceErrors::kDeferred && IsDataError(s)) {
      std::lock_guard<std::mutex> lock(pending_mu_);
      if (first_error_.ok()) first_error_ = s;
      return absl::OkStatus();
    }
    return Annotate(s, d.implementation->name());
  }
  if (!s.ok()) {
    slots_->Release(slot);  // nothing was queued that will write it
    return Annotate(s, d.implementation->name());
  }
  if (device_errors_ == DeviceErrors::kSynchronous) {
    Status synced = stream.Synchronize();
    const bool bad = SlotState(slot) == kSlotError;
    const ErrorSlotData data = *slot.host;
    slots_->Release(slot);
    OPSCHED_RETURN_IF_ERROR(synced);
    if (bad) return registry_->FindOp(entry->canonical.op())->DeviceError(entry->canonical, data.position, data.value);
    return absl::OkStatus();
  }
  std::lock_guard<std::mutex> lock(pending_mu_);
  std::deque<Epoch>& epochs = epochs_[{stream.device(), stream.native()}];
  if (epochs.empty() || epochs.back().closed) epochs.emplace_back();
  Epoch& open = epochs.back();
  open.checks.push_back(PendingCheck{slot, entry});
  if (open.checks.size() >= kChecksPerEpoch) {
    if (spare_events_.empty()) {
      OPSCHED_ASSIGN_OR_RETURN(Event e, Event::Create(stream.device()));
      spare_events_.push_back(std::move(e));
    }
    open.event = std::move(spare_events_.back());
    spare_events_.pop_back();
    OPSCHED_RETURN_IF_ERROR(open.event.Record(stream));
    open.closed = true;
  }
  return absl::OkStatus();
}

void Runtime::Settle(Epoch& epoch) {
  for (const PendingCheck& c : epoch.checks) {
    if (SlotState(c.slot) == kSlotError && first_error_.ok()) {
      const CachedDecision& e = *c.entry;
      first_error_ = registry_->FindOp(e.canonical.op())
                         ->DeviceError(e.canonical, c.slot.host->position, c.slot.host->value);
    }
    slots_->Release(c.slot);
  }
  epoch.checks.clear();
  if (epoch.closed) spare_events_.push_back(std::move(epoch.event));
}

void Runtime::PollPending(const Stream* synchronized) {
  std::lock_guard<std::mutex> lock(pending_mu_);
  for (auto& [key, epochs] : epochs_) {
    const bool all = synchronized != nullptr && key == std::make_pair(synchronized->device(), synchronized->native());
    while (!epochs.empty()) {
      Epoch& front = epochs.front();
      if (!all) {
        if (!front.closed) break;
        StatusOr<bool> done = front.event.Done();
        if (!done.ok() || !*done) break;
      }
      Settle(front);
      epochs.pop_front();
    }
  }
}

Status Runtime::Synchronize(const Stream& stream) {
  OPSCHED_RETURN_IF_ERROR(stream.Synchronize());
  PollPending(&stream);
  return TakeDeviceError();
}

Status Runtime::TakeDeviceError() {
  PollPending(nullptr);
  std::lock_guard<std::mutex> lock(pending_mu_);
  Status error = first_error_;
  first_error_ = absl::OkStatus();
  return error;
}

StatusOr<Decision> Runtime::Decide(const Workload& workload) {
  OPSCHED_ASSIGN_OR_RETURN(const CachedDecision* entry, dispatcher_->Decide(workload));
  return entry->decision;
}

StatusOr<Explanation> Runtime::Explain(const Workload& workload) const {
  return dispatcher_->Explain(workload);
}

StatusOr<Explanation> Runtime::Explain(std::string_view workload_line) const {
  OPSCHED_ASSIGN_OR_RETURN(Workload w, ParseWorkload(workload_line));
  return dispatcher_->Explain(w);
}

}  // namespace opsched
