#include <memory>

#include "bench/lib/bench_runner.h"
#include "core/format.h"
#include "tools/commands.h"

namespace opsched::tools {

namespace {

struct BenchFlags {
  std::string target;
  std::string baseline;
  double tolerance_pct = 5;
  double min_change_us = 0.5;
  bool update_baseline = false;
  std::string report;
  int min_repeats = 10;
  double min_time_ms = 20;
  std::string index_pattern = "uniform";
  bool no_progress = false;
  size_t width = kTableWidth;
};

// The exit status of a bench run (see docs/bench.md) and, for 2, why.
struct BenchOutcome {
  int code = 0;
  std::string why;
};

BenchOutcome Outcome(const bench::BenchReport& report) {
  int bad_lines = 0, failed = 0, measured = 0;
  for (const bench::BenchEntry& e : report.entries()) {
    if (e.verdict() != "error") {
      ++measured;
    } else if (e.bad_line()) {
      ++bad_lines;
    } else {
      ++failed;  // the tuned choice failed (a wrong result, an error from the Runtime)
    }
  }
  if (bad_lines > 0) return {2, fmt::format("{} bad line(s) in the suite", bad_lines)};
  if (measured == 0 && failed == 0) return {2, "the suite holds no workload"};
  if (failed > 0 || report.regressions() > 0) return {1, ""};
  return {0, ""};
}

}  // namespace

// `opsched bench`: replays a suite through the Runtime against a baseline. Exit status 1
// on a regression or a failing tuned choice; 2 on usage or I/O errors (an unreadable
// suite, records or baseline, a missing baseline without --update-baseline, a bad suite
// line, a suite without workloads); 0 otherwise.
void AddBenchCommand(CLI::App& app, int* exit_code) {
  auto options = std::make_shared<bench::BenchOptions>();
  auto flags = std::make_shared<BenchFlags>();
  CLI::App* b = app.add_subcommand("bench", "Benchmark a suite through the Runtime against a baseline");
  b->add_option("--suite", options->suite_path, "File of workload lines")->required();
  b->add_option("--records", options->records, "Record logs the Runtime loads");
  b->add_option("--model", options->model_file, "Selector model the Runtime loads (opsched records train)");
  b->add_option("--reference", options->reference_records,
                "Record logs that only set the best known (oracle) column, never served (e.g. a later tuning run "
                "of held-out lines)");
  b->add_option("--target", flags->target, "cpu or cuda:N (default: the first GPU, else cpu)");
  b->add_option("--baseline", flags->baseline, "Baseline JSON (default bench/baselines/<kind>-<device>.json)");
  b->add_option("--tolerance", flags->tolerance_pct, "Percent slower than the baseline that is still fine")
      ->capture_default_str();
  b->add_option("--min-change-us", flags->min_change_us,
                "Microseconds a regression must also exceed (launch-bound ops jitter by tenths of a µs)")
      ->capture_default_str();
  b->add_flag("--update-baseline", flags->update_baseline, "Write this run's medians as the baseline");
  b->add_option("--report", flags->report, "Folder for report.json, report.md and speedups.svg");
  b->add_option("--rounds", options->rounds, "Interleaved measurement rounds per workload")->capture_default_str();
  b->add_option("--min-repeats", flags->min_repeats, "Timed repetitions per round at least")->capture_default_str();
  b->add_option("--min-time-ms", flags->min_time_ms, "Measured milliseconds per round at least")
      ->capture_default_str();
  b->add_option("--index-pattern", flags->index_pattern, "uniform, unique or hot")
      ->check(CLI::IsMember({"uniform", "unique", "hot"}))
      ->capture_default_str();
  AddL2FlushOption(b, &options->measure.l2_flush);
  b->add_flag("--no-progress", flags->no_progress, "No progress line");
  AddWideFlag(b, &flags->width);
  b->callback([=] {
    // The whole suite parses before anything is measured.
    if (!SuiteIsGood("bench", options->suite_path)) {
      *exit_code = 2;
      return;
    }
    bench::BenchOptions o = *options;
    if (flags->target.empty()) {
      o.target = DefaultTarget();
    } else {
      StatusOr<Device> device = ParseDevice(flags->target);
      StatusOr<Target> t = device.ok() ? QueryTarget(*device) : StatusOr<Target>(device.status());
      if (!t.ok()) {
        fmt::print(stderr, "opsched bench: {}\n", t.status().message());
        *exit_code = 2;
        return;
      }
      o.target = *t;
    }
    o.baseline_path = flags->baseline.empty() ? bench::DefaultBaselinePath(o.target) : flags->baseline;
    o.require_baseline = !flags->update_baseline;
    o.tolerance = flags->tolerance_pct / 100;
    o.min_change_us = flags->min_change_us;
    o.measure.min_repeats = flags->min_repeats;
    o.measure.min_total_ms = flags->min_time_ms;
    o.generator.index_pattern = flags->index_pattern;
    o.progress = !flags->no_progress;
    fmt::print(stderr, "opsched bench: {} on {}, baseline {}\n", o.suite_path, o.target.ToString(), o.baseline_path);
    StatusOr<bench::BenchReport> report = bench::RunBench(Registry::Global(), o);
    if (!report.ok()) {
      fmt::print(stderr, "opsched bench: {}\n", report.status().message());
      *exit_code = 2;
      return;
    }
    std::fputs(bench::FormatTable(*report, flags->width).c_str(), stdout);
    const BenchOutcome outcome = Outcome(*report);
    int code = outcome.code;
    if (!outcome.why.empty()) fmt::print(stderr, "opsched bench: {}\n", outcome.why);
    if (!flags->report.empty()) {
      Status s = bench::WriteReports(*report, flags->report);
      if (absl::IsFailedPrecondition(s)) {
        // No gnuplot here: the data and script are written; the chart can be drawn later.
        fmt::print(stderr, "opsched bench: {} (run: cd {} && gnuplot speedups.gp)\n", s.message(), flags->report);
      } else if (!s.ok()) {
        fmt::print(stderr, "opsched bench: {}\n", s.message());
        code = 2;
      } else {
        fmt::print("reports in {}: report.json report.md speedups.svg\n", flags->report);
      }
    }
    if (flags->update_baseline) {
      Status s = bench::WriteBaseline(*report, o.baseline_path);
      if (!s.ok()) {
        fmt::print(stderr, "opsched bench: {}\n", s.message());
        code = 2;
      } else {
        fmt::print("baseline written to {}\n", o.baseline_path);
      }
    }
    *exit_code = code;
  });
}

}  // namespace opsched::tools
