// opsched bench: each workload of a suite run through the Runtime exactly as a consumer
// runs it (dispatch included), timed with the tuner's measurement rules, beside the
// strategy's heuristic choice and the best choice in the records (the oracle), in
// interleaved rounds; then compared with a baseline.
#pragma once

#include <string>
#include <vector>

#include "bench/lib/baseline.h"
#include "bench/lib/bench_report.pb.h"
#include "core/table.h"
#include "core/target.h"
#include "registry/registry.h"
#include "tuner/measure.h"

namespace opsched::bench {

struct BenchOptions {
  std::string suite_path;
  Target target;
  std::vector<std::string> records;
  // Records that only say what is best known (the oracle column), never served: e.g. a
  // later tuning run of a held-out suite, to judge how well untuned lines are served.
  std::vector<std::string> reference_records;
  std::string model_file;     // a selector model the Runtime loads (optional)
  std::string baseline_path;  // read when it exists
  bool require_baseline = false;  // a missing baseline is an error (not every line "new")
  double tolerance = 0.05;    // fraction
  double min_change_us = 0.5;  // and at least this much (see verdict.h)
  int rounds = 3;             // interleaved measurement rounds, pooled
  // A progress line with an ETA on stderr, as `opsched tune` prints (tuner/progress.h).
  bool progress = false;
  MeasureOptions measure;
  GeneratorOptions generator;
  uint64_t seed = 1;
};

// The report (entries in suite order). Errors only for an unreadable suite, records or
// baseline (a missing one too, with require_baseline).
StatusOr<BenchReport> RunBench(const Registry& registry, const BenchOptions& options);


// The terminal table, at most `width` columns wide (core/table.h; 0: every column in full),
// then the per-op geometric means and the regression count.
std::string FormatTable(const BenchReport& report, size_t width = kTableWidth);
// report.json, report.md and speedups.svg (drawn by gnuplot) in `dir`.
Status WriteReports(const BenchReport& report, const std::string& dir);

}  // namespace opsched::bench
