// TuneSession: tunes every workload of a suite on one or more devices of this host and
// appends a record per measured candidate to one log as it goes (a killed session loses
// at most the candidates in flight). Workloads are handed out dynamically: each device
// takes the next one when it finishes its last, and its records carry its own target.
// A second run resumes: candidates already in the log are not measured again, and their
// results seed the search. Each workload first measures what the Runtime would serve
// today (tuner/seeds.h). A timeout or crash in the log
// is measured once more (tuner/retry.h; TuneOptions::no_retry turns that off).
#pragma once

#include <string>
#include <vector>

#include "core/config.h"
#include "core/table.h"
#include "core/target.h"
#include "registry/registry.h"
#include "tuner/evaluator.h"
#include "tuner/measure.h"

namespace opsched {

struct TuneOptions {
  std::string suite_path;
  Target target;  // the device tuned on (the first, with several evaluators)
  std::string records_path;
  std::string policy = "xgb";
  int trials = 64;             // per workload, counting those resumed from the log
  double time_budget_s = 0;    // whole session; 0: none
  int64_t memory_budget = 0;   // bytes of workspace a candidate may use; 0: none
  // Tune only these implementations (a new kernel, a library upgrade); empty: every one
  // that applies. The records of the others stay, and serving takes the best of all.
  std::vector<std::string> implementations;
  int early_stop = 0;          // stop a workload after this many trials without improvement; 0: off
  // A candidate whose first warm-up (or a timed round) is this many times slower than the
  // workload's best so far is cut short after one timed repetition (MeasureOptions::cutoff_us);
  // 0: every candidate gets the full measurement.
  double cutoff_factor = 10;
  int batch = 8;               // candidates proposed at a time
  uint64_t seed = 1;
  MeasureOptions measure;
  GeneratorOptions generator;
  // Where candidates are checked (--verify): kAuto verifies on the device where the op
  // has a DeviceVerification; kHost moves inputs and outputs to the host's reference.
  Verification verification = Verification::kAuto;
  // Records of other workloads: the guided policy learns from them, and seeds are what
  // a Runtime loading them (and the log) would serve.
  std::vector<std::string> transfer_logs;
  // A selector model: seeds include what it would serve (its prediction, or the floor).
  std::string model_file;
  bool progress = true;
  std::string session_id;  // empty: a random one
  bool no_retry = false;   // logged timeouts and crashes are final (tuner/retry.h)
};

struct WorkloadResult {
  int line = 0;
  std::string workload;  // canonical line, or the line as written when it is bad
  std::string error;     // why the workload was not tuned
  std::string best_implementation;
  std::string best_config;
  double best_us = 0;         // 0 when no candidate succeeded
  std::string heuristic;      // the strategy's choice
  double heuristic_us = 0;    // its measured time (0 when it failed or was not measured)
  int candidates = 0;         // legal candidates within the memory budget
  int over_budget = 0;        // candidates left out by the memory budget
  int trials = 0;             // measured (resumed included)
  int resumed = 0;            // of which read from the log
  int measured = 0;           // of which measured in this session
  int failures = 0;           // non-ok results
  double seconds = 0;         // tuning time of this workload
  std::string device;         // where it was tuned ("cuda:1", "rank 2 cuda:0")
};

struct TuneReport {
  std::vector<WorkloadResult> workloads;
  int measured = 0;  // candidates measured in this session
  double seconds = 0;
  std::string session_id;
  // A table: per workload the best choice, its time, the heuristic's and the speedup, at
  // most `width` columns wide (core/table.h; 0: every column in full); then the summary.
  std::string ToString(size_t width = kTableWidth) const;
};

class TuneSession {
 public:
  TuneSession(const Registry& registry, TuneOptions options, CandidateEvaluator* evaluator);
  // One evaluator per device: evaluators[i] measures on targets[i].
  TuneSession(const Registry& registry, TuneOptions options, std::vector<Target> targets,
              std::vector<CandidateEvaluator*> evaluators);
  // Errors only when the suite or the records log cannot be opened; bad suite lines and
  // failing candidates are part of the report.
  StatusOr<TuneReport> Run();

 private:
  const Registry& registry_;
  TuneOptions options_;
  std::vector<Target> targets_;
  std::vector<CandidateEvaluator*> evaluators_;
};

}  // namespace opsched
