// Evaluating one candidate (an implementation and config) for a workload: check the
// result against the op's float64 reference on generated inputs, then measure. A wrong
// result is recorded and not timed; errors become record statuses, never exceptions.
#pragma once

#include <memory>
#include <string>

#include "core/config.h"
#include "core/target.h"
#include "core/workload.h"
#include "records/records.pb.h"
#include "registry/registry.h"
#include "tuner/measure.h"
#include "tuner/stats.h"
#include "tuner/trial.h"

namespace opsched {

struct Evaluation {
  records::RecordStatus status = records::STATUS_UNSPECIFIED;
  std::string message;
  Stats stats;
  int64_t workspace_bytes = 0;
};

struct EvaluateOptions {
  MeasureOptions measure;
  GeneratorOptions generator;
  uint64_t seed = 0;
  // Where inputs are generated and results checked: on the device where the op can
  // (kAuto), or as asked (TuneOptions::verification).
  Verification verification = Verification::kAuto;
};

// Where candidates are evaluated: in this process, in a worker process, or (tests,
// replays) anywhere that can answer.
class CandidateEvaluator {
 public:
  virtual ~CandidateEvaluator() = default;
  virtual Evaluation Evaluate(const Workload& canonical, const Candidate& candidate,
                              const EvaluateOptions& options) = 0;
};

// Evaluates in this process on `target`, keeping the last workload's inputs (and their
// reference) between candidates.
class LocalEvaluator : public CandidateEvaluator {
 public:
  LocalEvaluator(const Registry& registry, Target target)
      : registry_(registry), target_(std::move(target)) {}
  Evaluation Evaluate(const Workload& canonical, const Candidate& candidate,
                      const EvaluateOptions& options) override;
  // True after an error that may have left the device unusable (the worker then exits).
  bool device_poisoned() const { return device_poisoned_; }

 private:
  const Registry& registry_;
  const Target target_;
  std::unique_ptr<Trial> trial_;
  uint64_t trial_key_ = 0;
  bool device_poisoned_ = false;
};

}  // namespace opsched
