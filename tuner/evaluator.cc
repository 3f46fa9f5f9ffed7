#include "tuner/evaluator.h"

#include "core/format.h"
#include "core/stable_hash.h"

namespace opsched {
namespace {

Evaluation Failed(records::RecordStatus status, const Status& error) {
  Evaluation e;
  e.status = status;
  e.message = std::string(Message(error));
  return e;
}

// The record status for an error met while running a candidate.
records::RecordStatus StatusFor(const Status& error) {
  // A vendor library declining this shape (cuDNN's NOT_SUPPORTED) is not a failure.
  if (absl::IsUnimplemented(error)) return records::NOT_APPLICABLE;
  if (absl::IsResourceExhausted(error)) return records::OUT_OF_MEMORY;
  if (absl::IsInvalidArgument(error) || absl::IsDataLoss(error)) return records::WRONG_RESULT;
  return records::LAUNCH_ERROR;
}

}  // namespace

Evaluation LocalEvaluator::Evaluate(const Workload& canonical, const Candidate& candidate,
                                    const EvaluateOptions& options) {
  const Implementation* impl = registry_.FindImplementation(candidate.implementation);
  if (impl == nullptr) {
    return Failed(records::NOT_APPLICABLE,
                  absl::NotFoundError(fmt::format("'{}' is not registered", candidate.implementation)));
  }
  Status applicable = impl->Applicable(canonical, target_);
  if (!applicable.ok()) return Failed(records::NOT_APPLICABLE, applicable);
  Status in_space = impl->Space(canonical, target_).Check(candidate.config);
  if (!in_space.ok()) return Failed(records::NOT_APPLICABLE, in_space);

  // Inputs are generated once per (workload, seed, pattern) and reused across
  // candidates: the reference is computed once too.
  const uint64_t key = StableHasher()
                           .Int(static_cast<int64_t>(canonical.hash()))
                           .Int(static_cast<int64_t>(options.seed))
                           .String(options.generator.index_pattern)
                           .Int(static_cast<int64_t>(options.verification))
                           .value();
  if (trial_ == nullptr || trial_key_ != key) {
    trial_.reset();
    TrialOptions to;
    to.generator = options.generator;
    to.seed = options.seed;
    to.verification = options.verification;  // kAuto: on the device where the op can, no host round trips
    StatusOr<std::unique_ptr<Trial>> trial = Trial::Create(registry_, canonical, target_, to);
    if (!trial.ok()) return Failed(StatusFor(trial.status()), trial.status());
    trial_ = *std::move(trial);
    trial_key_ = key;
  }
  Evaluation e;
  e.workspace_bytes = static_cast<int64_t>(impl->WorkspaceBytes(canonical, candidate.config));
  Status ran = trial_->Run(*impl, candidate.config);
  if (!ran.ok()) {
    const records::RecordStatus status = StatusFor(ran);
    if (status == records::LAUNCH_ERROR) device_poisoned_ = target_.kind != DeviceKind::kCpu;
    Evaluation failed = Failed(status, ran);
    failed.workspace_bytes = e.workspace_bytes;
    return failed;
  }
  Status checked = trial_->Check(*impl);
  if (checked.ok()) checked = trial_->CheckInputsUnchanged();
  if (!checked.ok()) {
    Evaluation failed = Failed(records::WRONG_RESULT, checked);
    failed.workspace_bytes = e.workspace_bytes;
    return failed;
  }
  DeviceClock clock(trial_.get(), impl, candidate.config, options.measure);
  StatusOr<Stats> stats = MeasureUntil(clock, options.measure);
  if (!stats.ok()) {
    const records::RecordStatus status = StatusFor(stats.status());
    if (status == records::LAUNCH_ERROR) device_poisoned_ = target_.kind != DeviceKind::kCpu;
    Evaluation failed = Failed(status == records::WRONG_RESULT ? records::LAUNCH_ERROR : status,
                               stats.status());
    failed.workspace_bytes = e.workspace_bytes;
    return failed;
  }
  e.status = records::OK;
  e.stats = *stats;
  return e;
}

}  // namespace opsched
