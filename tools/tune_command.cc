#include <charconv>
#include <cstdio>
#include <memory>

#include "core/format.h"
#include "core/gpu/gpu_backend.h"
#include "strategies/registry.h"
#include "tools/commands.h"
#include "tuner/session.h"
#include "tuner/worker.h"

namespace opsched::tools {

namespace {

// A worker needs time to start, generate inputs and check the candidate before it
// measures; below this every candidate would be killed and logged as a timeout.
constexpr double kMinTimeoutS = 1;
constexpr double kMaxTimeoutS = 24 * 3600;

// --timeout: a finite number of seconds within [kMinTimeoutS, kMaxTimeoutS].
CLI::Validator TimeoutSeconds() {
  return CLI::Validator(
      [](std::string& text) -> std::string {
        double seconds = 0;
        const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), seconds);
        if (error != std::errc() || end != text.data() + text.size()) {
          return fmt::format("'{}' is not a number of seconds", text);
        }
        if (!(seconds >= kMinTimeoutS && seconds <= kMaxTimeoutS)) {
          return fmt::format("{} s is not a usable timeout: give {} to {} seconds (a worker "
                             "needs time to start and check a candidate before measuring it)",
                             text, kMinTimeoutS, kMaxTimeoutS);
        }
        return std::string();
      },
      "SECONDS", "TimeoutSeconds");
}

struct TuneFlags {
  std::string target;
  double timeout_s = 60;
  std::string index_pattern = "uniform";
  int min_repeats = 10;
  double min_time_ms = 20;
};

}  // namespace

// `opsched tune`: measures the candidates of every workload of a suite and appends the
// records to a log.
void AddTuneCommand(CLI::App& app, int* exit_code) {
  auto options = std::make_shared<TuneOptions>();
  auto flags = std::make_shared<TuneFlags>();
  CLI::App* tune = app.add_subcommand("tune", "Measure candidates on a device and write records");
  tune->add_option("--suite", options->suite_path, "File of workload lines")->required();
  tune->add_option("--records", options->records_path, "Records log to append to (resumes from it)")
      ->required();
  tune->add_option("--target", flags->target, "cpu or cuda:N (default: the first GPU, else cpu)");
  tune->add_option("--policy", options->policy, "grid, random or xgb")
      ->check(CLI::IsMember({"grid", "random", "xgb"}));
  tune->add_option("--trials", options->trials, "Candidates measured per workload (log included)");
  tune->add_option("--time-budget", options->time_budget_s, "Seconds for the whole session");
  tune->add_option("--memory-budget", options->memory_budget, "Workspace bytes a candidate may use");
  tune->add_option("--early-stop", options->early_stop, "Stop a workload after K trials without improvement");
  tune->add_option("--batch", options->batch, "Candidates proposed at a time");
  tune->add_option("--seed", options->seed, "Seed of inputs and random choices");
  tune->add_option("--transfer", options->transfer_logs, "Record logs of other workloads (xgb)");
  tune->add_option("--timeout", flags->timeout_s, "Seconds a candidate may take before it is killed")
      ->check(TimeoutSeconds());
  tune->add_flag("--no-retry", options->no_retry,
                 "Logged timeouts and crashes are final (default: measured once more)");
  tune->add_option("--index-pattern", flags->index_pattern, "uniform, unique or hot (scatter-like ops)")
      ->check(CLI::IsMember({"uniform", "unique", "hot"}));
  tune->add_option("--min-repeats", flags->min_repeats, "Timed repetitions at least");
  tune->add_option("--min-time-ms", flags->min_time_ms, "Measured milliseconds at least per candidate");
  auto no_progress = std::make_shared<bool>(false);
  tune->add_flag("--no-progress", *no_progress, "No progress bar");
  tune->callback([=] {
    TuneOptions o = *options;
    if (flags->target.empty()) {
      o.target = DefaultTarget();
    } else {
      StatusOr<Device> device = ParseDevice(flags->target);
      StatusOr<Target> target = device.ok() ? QueryTarget(*device) : StatusOr<Target>(device.status());
      if (!target.ok()) {
        fmt::print(stderr, "opsched tune: {}\n", target.status().message());
        *exit_code = 2;
        return;
      }
      o.target = *target;
    }
    o.generator.index_pattern = flags->index_pattern;
    o.measure.min_repeats = flags->min_repeats;
    o.measure.min_total_ms = flags->min_time_ms;
    o.progress = !*no_progress;
    if (flags->timeout_s <= flags->min_time_ms / 1000) {
      fmt::print(stderr, "opsched tune: --timeout {} s is shorter than --min-time-ms {} ms of "
                         "measurement; every candidate would time out\n",
                 flags->timeout_s, flags->min_time_ms);
      *exit_code = 2;
      return;
    }
    fmt::print(stderr, "opsched tune: {} on {} ({} policy, {} trials per workload)\n", o.suite_path,
               o.target.ToString(), o.policy, o.trials);
    WorkerEvaluator evaluator(o.target.device(), flags->timeout_s);
    TuneSession session(Registry::Global(), o, &evaluator);
    StatusOr<TuneReport> report = session.Run();
    if (!report.ok()) {
      fmt::print(stderr, "opsched tune: {}\n", report.status().message());
      *exit_code = 2;
      return;
    }
    std::fputs(report->ToString().c_str(), stdout);
    fmt::print("records appended to {}; worker processes started: {}\n", o.records_path,
               evaluator.worker_starts());
    bool failed = false;
    for (const WorkloadResult& r : report->workloads) failed |= r.best_us == 0;
    *exit_code = failed ? 1 : 0;
  });
}

}  // namespace opsched::tools
