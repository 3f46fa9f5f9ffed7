// TuneSession: tunes every workload of a suite on one target and appends a record per
// measured candidate to a log as it goes (a killed session loses at most the candidate
// in flight). A second run resumes: candidates already in the log are not measured
// again, and their results seed the search — except a timeout or crash, which is
// measured once more (tuner/retry.h; TuneOptions::no_retry turns that off).
#pragma once

#include <string>
#include <vector>

#include "core/config.h"
#include "core/target.h"
#include "strategies/registry.h"
#include "tuner/evaluator.h"
#include "tuner/measure.h"

namespace opsched {

struct TuneOptions {
  std::string suite_path;
  Target target;
  std::string records_path;
  std::string policy = "xgb";
  int trials = 64;             // per workload, counting those resumed from the log
  double time_budget_s = 0;    // whole session; 0: none
  int64_t memory_budget = 0;   // bytes of workspace a candidate may use; 0: none
  int early_stop = 0;          // stop a workload after this many trials without improvement; 0: off
  int batch = 8;               // candidates proposed at a time
  uint64_t seed = 1;
  MeasureOptions measure;
  GeneratorOptions generator;
  std::vector<std::string> transfer_logs;  // records of other workloads for the guided policy
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
  int failures = 0;           // non-ok results
  double seconds = 0;         // tuning time of this workload
};

struct TuneReport {
  std::vector<WorkloadResult> workloads;
  int measured = 0;  // candidates measured in this session
  double seconds = 0;
  std::string session_id;
  // A table: per workload the best choice, its time, the heuristic's and the speedup.
  std::string ToString() const;
};

class TuneSession {
 public:
  TuneSession(const Registry& registry, TuneOptions options, CandidateEvaluator* evaluator);
  // Errors only when the suite or the records log cannot be opened; bad suite lines and
  // failing candidates are part of the report.
  StatusOr<TuneReport> Run();

 private:
  const Registry& registry_;
  TuneOptions options_;
  CandidateEvaluator* evaluator_;
};

}  // namespace opsched
