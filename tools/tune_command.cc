#include <charconv>
#include <cstdio>
#include <map>
#include <memory>

#include "absl/strings/numbers.h"
#include "absl/strings/str_split.h"
#include "core/format.h"
#include "core/gpu/gpu_backend.h"
#include "registry/registry.h"
#include "tools/commands.h"
#include "tuner/fleet_mpi.h"
#include "tuner/session.h"
#include "tuner/worker.h"

namespace opsched::tools {

namespace {

// A worker needs time to start, generate inputs and check the candidate before it
// measures; below this every candidate would be killed and logged as a timeout.
constexpr double kMinTimeoutS = 1;
constexpr double kMaxTimeoutS = 24 * 3600;
// Tuning ranks send a heartbeat every second (tuner/fleet_mpi.h): a rank is only given
// up after missing a few.
constexpr double kMinHeartbeatTimeoutS = 3;

// A finite number of seconds within [min_s, kMaxTimeoutS]; `why` says what the minimum is for.
CLI::Validator Seconds(double min_s, std::string why) {
  return CLI::Validator(
      [min_s, why](std::string& text) -> std::string {
        double seconds = 0;
        const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), seconds);
        if (error != std::errc() || end != text.data() + text.size()) {
          return fmt::format("'{}' is not a number of seconds", text);
        }
        if (!(seconds >= min_s && seconds <= kMaxTimeoutS)) {
          return fmt::format("{} s is not a usable timeout: give {} to {} seconds ({})", text, min_s,
                             kMaxTimeoutS, why);
        }
        return std::string();
      },
      "SECONDS", "Seconds");
}

struct TuneFlags {
  std::string target;
  std::string devices;
  bool mpi = false;
  double timeout_s = 60;
  double heartbeat_timeout_s = 20;
  std::string index_pattern = "uniform";
  std::string verify = "auto";
  int min_repeats = 10;
  double min_time_ms = 20;
  bool no_progress = false;
  size_t width = kTableWidth;
};

// The devices of --devices ("all", or GPU indices "0,2").
StatusOr<std::vector<Target>> ParseDevices(const std::string& text) {
  std::vector<int> indices;
  if (text == "all") {
    for (int i = 0; i < gpu::DeviceCount(); ++i) indices.push_back(i);
    if (indices.empty()) return absl::FailedPreconditionError("--devices all: no GPU: " + gpu::NoDeviceReason());
  } else {
    for (absl::string_view part : absl::StrSplit(text, ',')) {
      int i = 0;
      if (!absl::SimpleAtoi(part, &i) || i < 0) {
        return absl::InvalidArgumentError(fmt::format("--devices: '{}' is not a GPU index (expected all or 0,1,...)", part));
      }
      indices.push_back(i);
    }
  }
  std::vector<Target> targets;
  for (int i : indices) {
    OPSCHED_ASSIGN_OR_RETURN(Target t, QueryTarget(Device{gpu::BackendKind(), i}));
    for (const Target& seen : targets) {
      if (seen.device_index == i) return absl::InvalidArgumentError(fmt::format("--devices names GPU {} twice", i));
    }
    targets.push_back(std::move(t));
  }
  return targets;
}

}  // namespace

// `opsched tune`: measures the candidates of every workload of a suite and appends the
// records to a log, on one device, on several GPUs of this host (--devices), or over MPI
// ranks (--mpi).
void AddTuneCommand(CLI::App& app, int* exit_code) {
  auto options = std::make_shared<TuneOptions>();
  auto flags = std::make_shared<TuneFlags>();
  CLI::App* tune = app.add_subcommand("tune", "Measure candidates on a device and write records");
  tune->add_option("--suite", options->suite_path, "File of workload lines")->required();
  tune->add_option("--records", options->records_path, "Records log to append to (resumes from it)")
      ->required();
  tune->add_option("--target", flags->target, "cpu or cuda:N (default: the first GPU, else cpu)");
  tune->add_option("--devices", flags->devices,
                   "Tune on several GPUs of this host at once: all, or indices 0,1,... (one worker each)");
  tune->add_flag("--mpi", flags->mpi,
                 "Run under mpirun: rank 0 hands out workloads and writes the log, the other ranks tune");
  tune->add_option("--policy", options->policy, "grid, random or xgb")
      ->check(CLI::IsMember({"grid", "random", "xgb"}))
      ->capture_default_str();
  tune->add_option("--trials", options->trials, "Candidates measured per workload (log included)")->capture_default_str();
  tune->add_option("--time-budget", options->time_budget_s, "Seconds for the whole session (0: none)")
      ->capture_default_str();
  tune->add_option("--memory-budget", options->memory_budget, "Workspace bytes a candidate may use (0: none)")
      ->capture_default_str();
  tune->add_option("--implementations", options->implementations,
                   "Tune only these implementations (default: every one that applies)");
  tune->add_option("--early-stop", options->early_stop, "Stop a workload after K trials without improvement (0: off)")
      ->capture_default_str();
  tune->add_option("--cutoff", options->cutoff_factor,
                   "Cut a candidate short after one timed run when its warm-up is F times the best so far (0: off)")
      ->check(CLI::NonNegativeNumber)
      ->capture_default_str();
  tune->add_option("--batch", options->batch, "Candidates proposed at a time")->capture_default_str();
  tune->add_option("--seed", options->seed, "Seed of inputs and random choices")->capture_default_str();
  tune->add_option("--transfer", options->transfer_logs,
                   "Record logs of other workloads (seeds what they would serve; xgb learns from them)");
  tune->add_option("--model", options->model_file,
                   "Selector model (opsched records train): its choice is among the candidates measured first");
  tune->add_option("--timeout", flags->timeout_s, "Seconds a candidate may take before it is killed")
      ->check(Seconds(kMinTimeoutS, "a worker needs time to start and check a candidate before measuring it"))
      ->capture_default_str();
  tune->add_flag("--no-retry", options->no_retry,
                 "Logged timeouts and crashes are final (default: measured once more)");
  tune->add_option("--heartbeat-timeout", flags->heartbeat_timeout_s,
                   "--mpi: seconds without a word from a rank before its workload is re-queued")
      ->check(Seconds(kMinHeartbeatTimeoutS, "ranks send a heartbeat every second"))
      ->capture_default_str();
  tune->add_option("--index-pattern", flags->index_pattern, "uniform, unique or hot (scatter-like ops)")
      ->check(CLI::IsMember({"uniform", "unique", "hot"}))
      ->capture_default_str();
  tune->add_option("--verify", flags->verify,
                   "Where candidates are checked: auto (on the GPU where the op can), host or device")
      ->check(CLI::IsMember({"auto", "host", "device"}))
      ->capture_default_str();
  tune->add_option("--min-repeats", flags->min_repeats, "Timed repetitions at least")->capture_default_str();
  tune->add_option("--min-time-ms", flags->min_time_ms, "Measured milliseconds at least per candidate")
      ->capture_default_str();
  AddL2FlushOption(tune, &options->measure.l2_flush);
  tune->add_flag("--no-progress", flags->no_progress, "No progress line");
  AddWideFlag(tune, &flags->width);
  tune->callback([=] {
    TuneOptions o = *options;
    o.generator.index_pattern = flags->index_pattern;
    o.verification = ParseVerification(flags->verify).value_or(Verification::kAuto);  // checked by IsMember
    o.measure.min_repeats = flags->min_repeats;
    o.measure.min_total_ms = flags->min_time_ms;
    o.progress = !flags->no_progress;
    for (const std::string& name : o.implementations) {
      if (Registry::Global().FindImplementation(name) == nullptr) {
        fmt::print(stderr, "opsched tune: --implementations: no implementation '{}' (opsched ops lists them)\n", name);
        *exit_code = 2;
        return;
      }
    }
    if (flags->timeout_s <= flags->min_time_ms / 1000) {
      fmt::print(stderr, "opsched tune: --timeout {} s is shorter than --min-time-ms {} ms of "
                         "measurement; every candidate would time out\n",
                 flags->timeout_s, flags->min_time_ms);
      *exit_code = 2;
      return;
    }
    // The whole suite parses before anything is measured. Under MPI only rank 0 reads it
    // (the other ranks may not see the file): RunMpiTune checks it there.
    if (!flags->mpi && !SuiteIsGood("tune", o.suite_path)) {
      *exit_code = 2;
      return;
    }
    if (flags->mpi) {
      if (!flags->devices.empty()) {
        fmt::print(stderr, "opsched tune: --mpi and --devices do not combine (each rank tunes on one device)\n");
        *exit_code = 2;
        return;
      }
      MpiTuneOptions m;
      m.tune = o;
      m.target = flags->target;
      m.timeout_s = flags->timeout_s;
      m.dead_after_s = flags->heartbeat_timeout_s;
      m.table_width = flags->width;
      *exit_code = RunMpiTune(Registry::Global(), m);
      return;
    }
    std::vector<Target> targets;
    if (!flags->devices.empty()) {
      if (!flags->target.empty()) {
        fmt::print(stderr, "opsched tune: give --target or --devices, not both\n");
        *exit_code = 2;
        return;
      }
      StatusOr<std::vector<Target>> devices = ParseDevices(flags->devices);
      if (!devices.ok()) {
        fmt::print(stderr, "opsched tune: {}\n", devices.status().message());
        *exit_code = 2;
        return;
      }
      targets = *std::move(devices);
    } else if (flags->target.empty()) {
      targets.push_back(DefaultTarget());
    } else {
      StatusOr<Device> device = ParseDevice(flags->target);
      StatusOr<Target> target = device.ok() ? QueryTarget(*device) : StatusOr<Target>(device.status());
      if (!target.ok()) {
        fmt::print(stderr, "opsched tune: {}\n", target.status().message());
        *exit_code = 2;
        return;
      }
      targets.push_back(*target);
    }
    o.target = targets.front();
    std::string where = targets.front().ToString();
    for (size_t i = 1; i < targets.size(); ++i) where += fmt::format(" + {}", targets[i].device().ToString());
    fmt::print(stderr, "opsched tune: {} on {} ({} policy, {} trials per workload)\n", o.suite_path, where,
               o.policy, o.trials);
    std::vector<std::unique_ptr<WorkerEvaluator>> owned;
    std::vector<CandidateEvaluator*> evaluators;
    for (const Target& t : targets) {
      owned.push_back(std::make_unique<WorkerEvaluator>(t.device(), flags->timeout_s));
      evaluators.push_back(owned.back().get());
    }
    TuneSession session(Registry::Global(), o, targets, evaluators);
    StatusOr<TuneReport> report = session.Run();
    if (!report.ok()) {
      fmt::print(stderr, "opsched tune: {}\n", report.status().message());
      *exit_code = 2;
      return;
    }
    std::fputs(report->ToString(flags->width).c_str(), stdout);
    int starts = 0;
    for (const auto& e : owned) starts += e->worker_starts();
    fmt::print("records appended to {}; worker processes started: {}\n", o.records_path, starts);
    bool failed = false;
    for (const WorkloadResult& r : report->workloads) failed |= r.best_us == 0;
    *exit_code = failed ? 1 : 0;
  });
}

}  // namespace opsched::tools
