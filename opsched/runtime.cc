#include "opsched/runtime.h"

#include <atomic>
#include <deque>
#include <map>
#include <mutex>
#include <optional>
#include <utility>

#include "core/data_error.h"
#include "core/error_slot_pool.h"
#include "core/event.h"
#include "core/format.h"
#include "core/gpu/gpu_backend.h"
#include "core/log.h"
#include "opsched/untuned_recorder.h"
#include "records/database.h"
#include "registry/registry.h"
#include "selector/selector.h"
#include "strategies/dispatcher.h"
#include "strategies/register_all.h"

namespace opsched {

// What the Runtime holds (its pimpl): records, selector and dispatcher, the untuned
// recorder, the workspace allocator, and the bookkeeping of deferred device errors.
struct Runtime::State {
  using StreamKey = std::pair<Device, void*>;
  struct PendingCheck {
    ErrorSlot slot;
    const CachedDecision* entry;
  };
  // A check queued inside CUDA graph capture: its slot is written by every replay.
  struct CapturedCheck {
    PendingCheck check;
    StreamKey stream;
  };
  // Checks queued on one stream between two events: once the event has completed, their
  // slots are final (still pending = no error). One event per kChecksPerEpoch calls
  // keeps the per-call cost low.
  struct Epoch {
    std::vector<PendingCheck> checks;
    Event event;
    bool closed = false;
  };
  static constexpr size_t kChecksPerEpoch = 32;

  Status Validate(const CachedDecision& entry, absl::Span<const Tensor> tensors, const Stream& stream) const;
  // The op's error for a slot in the error state.
  Status SlotError(const PendingCheck& check) const;
  // Keeps `error` as stream `key`'s deferred error unless it already has one. errors_
  // holds only errors. Needs pending_mu_.
  void KeepFirst(const StreamKey& key, Status error);
  // Reads the slots of an epoch of stream `key` whose work has finished; releases them.
  // Needs pending_mu_.
  void Settle(const StreamKey& key, Epoch& epoch);
  // Settles the closed epochs whose events completed (every stream) and reads the slots
  // of captured calls; with `stream`, also every epoch of that stream (after it was
  // synchronised).
  void PollPending(const Stream* synchronized);

  DeviceErrors device_errors_ = DeviceErrors::kDeferred;
  std::unique_ptr<ErrorSlotPool> slots_;
  std::mutex pending_mu_;
  // Calls since finished epochs were last collected: they are collected once per
  // kChecksPerEpoch calls, not on every call (an event query costs as much as a launch).
  std::atomic<uint32_t> calls_since_poll_{0};
  std::map<StreamKey, std::deque<Epoch>> epochs_;
  std::vector<CapturedCheck> captured_checks_;  // kept for the life of the runtime
  std::vector<Event> spare_events_;
  std::map<StreamKey, Status> errors_;  // the first deferred error of each stream that has one

  const Registry* registry_ = nullptr;
  std::unique_ptr<records::Database> db_;
  std::unique_ptr<Selector> selector_;
  Status model_status_;
  std::string records_note_;
  std::unique_ptr<Dispatcher> dispatcher_;
  std::unique_ptr<UntunedRecorder> untuned_;
  std::unique_ptr<CachingWorkspaceAllocator> owned_allocator_;
  WorkspaceAllocator* allocator_ = nullptr;
};

Runtime::Runtime(std::unique_ptr<State> state) : s_(std::move(state)) {}
Runtime::~Runtime() = default;

const Target& Runtime::target() const { return s_->dispatcher_->target(); }
const records::Database& Runtime::records() const { return *s_->db_; }
const Status& Runtime::model_status() const { return s_->model_status_; }
const std::string& Runtime::records_note() const { return s_->records_note_; }
const Selector* Runtime::selector() const { return s_->selector_.get(); }

StatusOr<std::unique_ptr<Runtime>> Runtime::Create(RuntimeOptions options) {
  std::unique_ptr<Runtime> rt(new Runtime(std::make_unique<State>()));
  State& st = *rt->s_;
  Target target = options.target ? *options.target : DefaultTarget();
  if (options.registry == nullptr) OPSCHED_RETURN_IF_ERROR(Annotate(RegisterAll(), "registering the built-in ops"));
  const Registry& registry = options.registry ? *options.registry : Registry::Global();
  st.registry_ = &registry;
  st.db_ = std::make_unique<records::Database>();
  st.db_->SetLibraryUse([&registry](std::string_view name) { return registry.LibraryUseOf(name); });
  for (const std::string& path : options.record_files) {
    OPSCHED_RETURN_IF_ERROR(Annotate(st.db_->Load(path), "loading records"));
  }
  st.records_note_ = records::NoRecordsForTargetNote(*st.db_, target, options.dispatch.allow_transferred_records);
  if (!options.model_file.empty()) {
    StatusOr<std::unique_ptr<Selector>> selector = Selector::Load(options.model_file);
    Status usable = selector.ok() ? (*selector)->Serves(target, options.dispatch.allow_transferred_records)
                                  : selector.status();
    if (usable.ok()) {
      st.selector_ = *std::move(selector);
    } else {
      st.model_status_ = Annotate(usable, fmt::format("selector model {} not used", options.model_file));
      Log().error("{}", st.model_status_.message());
    }
  }
  st.dispatcher_ = std::make_unique<Dispatcher>(registry, std::move(target), st.db_.get(), options.dispatch,
                                                 st.selector_.get());
  st.dispatcher_->set_prepare(true);
  if (!options.record_untuned_file.empty()) {
    OPSCHED_ASSIGN_OR_RETURN(st.untuned_, UntunedRecorder::Open(options.record_untuned_file));
    st.dispatcher_->set_observer([recorder = st.untuned_.get()](const CachedDecision& entry) {
      if (entry.decision.provenance == Provenance::kExactRecord) return;
      StatusOr<bool> noted = recorder->Note(entry.canonical.ToString());
      // Serving goes on without the file: a full disk must not fail the op.
      if (!noted.ok()) Log().warn("{}", noted.status().message());
    });
  }
  st.device_errors_ = options.device_errors;
  st.slots_ = std::make_unique<ErrorSlotPool>(st.dispatcher_->target().device());
  if (options.allocator != nullptr) {
    st.allocator_ = options.allocator;
  } else {
    st.owned_allocator_ = std::make_unique<CachingWorkspaceAllocator>();
    st.allocator_ = st.owned_allocator_.get();
  }
  return rt;
}

Status Runtime::State::Validate(const CachedDecision& entry, absl::Span<const Tensor> tensors,
                         const Stream& stream) const {
  const Workload& w = entry.canonical;
  if (tensors.size() != entry.expected.size()) {
    return absl::InvalidArgumentError(fmt::format("{} takes {} tensors (inputs then outputs), got {}",
                                                  w.op(), entry.expected.size(), tensors.size()));
  }
  const Device device = dispatcher_->target().device();
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

Status Runtime::Run(const Workload& workload, absl::Span<const Tensor> tensors, const Stream& stream) {
  return RunWith(workload, tensors, stream, nullptr, 0, /*caller_workspace=*/false);
}

Status Runtime::Run(const Workload& workload, absl::Span<const Tensor> tensors, const Stream& stream,
                    void* workspace, size_t workspace_bytes) {
  return RunWith(workload, tensors, stream, workspace, workspace_bytes, /*caller_workspace=*/true);
}

StatusOr<size_t> Runtime::WorkspaceBytes(const Workload& workload) {
  gpu::DeviceScope scope;
  OPSCHED_RETURN_IF_ERROR(scope.Enter(target().device()));
  OPSCHED_ASSIGN_OR_RETURN(const CachedDecision* entry, s_->dispatcher_->Decide(workload));
  return entry->decision.workspace_bytes;
}

Status Runtime::RunWith(const Workload& workload, absl::Span<const Tensor> tensors, const Stream& stream,
                        void* workspace, size_t workspace_bytes, bool caller_workspace) {
  const bool gpu = target().kind != DeviceKind::kCpu;
  // Decided and prepared with the target's device current; the caller's device is
  // restored when the call returns.
  gpu::DeviceScope scope;
  OPSCHED_RETURN_IF_ERROR(scope.Enter(target().device()));
  const CachedDecision* entry = s_->dispatcher_->Cached(workload);
  std::optional<bool> capturing;
  auto Capturing = [&]() -> StatusOr<bool> {
    if (!capturing) {
      if (!gpu) return false;
      OPSCHED_ASSIGN_OR_RETURN(capturing, gpu::StreamCapturing(stream.native()));
    }
    return *capturing;
  };
  if (entry == nullptr) {
    // Deciding asks the vendor library and allocates: not while a graph is captured.
    OPSCHED_ASSIGN_OR_RETURN(const bool in_capture, Capturing());
    if (in_capture) {
      return absl::FailedPreconditionError(fmt::format(
          "{}: first call of this workload inside CUDA graph capture; call it once before capturing, so that "
          "it is decided and prepared", workload.op()));
    }
    OPSCHED_ASSIGN_OR_RETURN(entry, s_->dispatcher_->Decide(workload));
  }
  OPSCHED_RETURN_IF_ERROR(s_->Validate(*entry, tensors, stream));
  const Decision& d = entry->decision;
  const Prepared& prepared = *entry->prepared;
  const size_t needed = prepared.workspace_bytes();
  if (caller_workspace) {
    if (needed > workspace_bytes) {
      return absl::InvalidArgumentError(fmt::format("{} ({}) needs {} bytes of workspace, {} given",
                                                    workload.op(), d.implementation->name(), needed,
                                                    workspace_bytes));
    }
    if (needed > 0 && workspace == nullptr) {
      return absl::InvalidArgumentError(fmt::format("{}: workspace is null", workload.op()));
    }
  } else {
    workspace = nullptr;
    workspace_bytes = needed;
    if (needed > 0) {
      // The capture state, asked of the driver once a call, serves the allocator and the
      // device-error checks below alike.
      OPSCHED_ASSIGN_OR_RETURN(const bool in_capture, Capturing());
      OPSCHED_ASSIGN_OR_RETURN(workspace, s_->allocator_->Get(stream, needed, in_capture));
    }
  }
  const bool checks = d.implementation->ReportsDeviceErrors();
  ErrorSlot slot;
  bool captured = false;
  if (checks) {
    OPSCHED_ASSIGN_OR_RETURN(captured, Capturing());
    if (!captured && s_->calls_since_poll_.fetch_add(1, std::memory_order_relaxed) + 1 >= State::kChecksPerEpoch) {
      s_->calls_since_poll_.store(0, std::memory_order_relaxed);
      s_->PollPending(nullptr);
    }
    OPSCHED_ASSIGN_OR_RETURN(slot, s_->slots_->Acquire());
  }
  Status s = prepared.Run(PreparedArgs{tensors, workspace, workspace_bytes, stream, slot});
  const State::StreamKey key{stream.device(), stream.native()};
  if (!checks) {
    if (s.ok()) return s;
    // A CPU implementation returns a data error from Run; deferred, it is held for
    // Synchronize() exactly like an error a device kernel reports.
    if (s_->device_errors_ == DeviceErrors::kDeferred && IsDataError(s)) {
      std::lock_guard<std::mutex> lock(s_->pending_mu_);
      s_->KeepFirst(key, std::move(s));
      return absl::OkStatus();
    }
    return Annotate(s, d.implementation->name());
  }
  if (captured) {
    // Every replay of the graph writes this slot: it is kept (never recycled) and read
    // by each Synchronize of the stream.
    std::lock_guard<std::mutex> lock(s_->pending_mu_);
    s_->captured_checks_.push_back(State::CapturedCheck{State::PendingCheck{slot, entry}, key});
    return s.ok() ? s : Annotate(s, d.implementation->name());
  }
  if (!s.ok()) {
    s_->slots_->Release(slot);  // nothing was queued that will write it
    return Annotate(s, d.implementation->name());
  }
  if (s_->device_errors_ == DeviceErrors::kSynchronous) {
    Status synced = stream.Synchronize();
    const Status error = SlotState(slot) == kSlotError ? s_->SlotError({slot, entry}) : absl::OkStatus();
    s_->slots_->Release(slot);
    OPSCHED_RETURN_IF_ERROR(synced);
    return error;
  }
  std::lock_guard<std::mutex> lock(s_->pending_mu_);
  std::deque<State::Epoch>& epochs = s_->epochs_[key];
  if (epochs.empty() || epochs.back().closed) epochs.emplace_back();
  State::Epoch& open = epochs.back();
  open.checks.push_back(State::PendingCheck{slot, entry});
  if (open.checks.size() >= State::kChecksPerEpoch) {
    if (s_->spare_events_.empty()) {
      OPSCHED_ASSIGN_OR_RETURN(Event e, Event::Create(stream.device()));
      s_->spare_events_.push_back(std::move(e));
    }
    open.event = std::move(s_->spare_events_.back());
    s_->spare_events_.pop_back();
    OPSCHED_RETURN_IF_ERROR(open.event.Record(stream));
    open.closed = true;
  }
  return absl::OkStatus();
}

Status Runtime::State::SlotError(const PendingCheck& check) const {
  const CachedDecision& e = *check.entry;
  return registry_->FindOp(e.canonical.op())->DeviceError(e.canonical, check.slot.host->position,
                                                           check.slot.host->value);
}

void Runtime::State::KeepFirst(const StreamKey& key, Status error) {
  errors_.try_emplace(key, std::move(error));
}

void Runtime::State::Settle(const StreamKey& key, Epoch& epoch) {
  for (const PendingCheck& c : epoch.checks) {
    if (SlotState(c.slot) == kSlotError) KeepFirst(key, SlotError(c));
    slots_->Release(c.slot);
  }
  epoch.checks.clear();
  if (epoch.closed) spare_events_.push_back(std::move(epoch.event));
}

void Runtime::State::PollPending(const Stream* synchronized) {
  std::lock_guard<std::mutex> lock(pending_mu_);
  for (auto& [key, epochs] : epochs_) {
    const bool all = synchronized != nullptr && key == StreamKey{synchronized->device(), synchronized->native()};
    while (!epochs.empty()) {
      Epoch& front = epochs.front();
      if (!all) {
        if (!front.closed) break;
        StatusOr<bool> done = front.event.Done();
        if (!done.ok() || !*done) break;
      }
      Settle(key, front);
      epochs.pop_front();
    }
  }
  // Captured calls: a slot in the error state was written by a replay; it is reported
  // once and set pending again for the next replays.
  for (CapturedCheck& c : captured_checks_) {
    if (SlotState(c.check.slot) != kSlotError) continue;
    KeepFirst(c.stream, SlotError(c.check));
    c.check.slot.host->state = kSlotPending;
  }
}

Status Runtime::Synchronize(const Stream& stream) {
  OPSCHED_RETURN_IF_ERROR(stream.Synchronize());
  s_->PollPending(&stream);
  std::lock_guard<std::mutex> lock(s_->pending_mu_);
  auto it = s_->errors_.find(State::StreamKey{stream.device(), stream.native()});
  if (it == s_->errors_.end()) return absl::OkStatus();
  Status error = std::move(it->second);
  s_->errors_.erase(it);
  return error;
}

Status Runtime::TakeDeviceError() {
  s_->PollPending(nullptr);
  std::lock_guard<std::mutex> lock(s_->pending_mu_);
  if (s_->errors_.empty()) return absl::OkStatus();
  Status error = std::move(s_->errors_.begin()->second);
  s_->errors_.erase(s_->errors_.begin());
  return error;
}

StatusOr<Decision> Runtime::Decide(const Workload& workload) {
  gpu::DeviceScope scope;
  OPSCHED_RETURN_IF_ERROR(scope.Enter(target().device()));
  OPSCHED_ASSIGN_OR_RETURN(const CachedDecision* entry, s_->dispatcher_->Decide(workload));
  return entry->decision;
}

StatusOr<Explanation> Runtime::Explain(const Workload& workload) const {
  return s_->dispatcher_->Explain(workload);
}

StatusOr<Explanation> Runtime::Explain(std::string_view workload_line) const {
  OPSCHED_ASSIGN_OR_RETURN(Workload w, ParseWorkload(workload_line));
  return s_->dispatcher_->Explain(w);
}

}  // namespace opsched
