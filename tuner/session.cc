#include "tuner/session.h"

#include <unistd.h>

#include <atomic>
#include <map>
#include <chrono>
#include <mutex>
#include <random>
#include <thread>

#include "core/format.h"
#include "core/table.h"
#include "records/database.h"
#include "selector/selector.h"
#include "strategies/dispatcher.h"
#include "tuner/progress.h"
#include "tuner/record_sink.h"
#include "tuner/suite.h"
#include "tuner/workload_tuner.h"

namespace opsched {
namespace {

using Clock = std::chrono::steady_clock;

double Since(Clock::time_point t) { return std::chrono::duration<double>(Clock::now() - t).count(); }

std::string RandomId() {
  std::random_device rd;
  return fmt::format("{:08x}{:08x}", rd(), rd());
}

}  // namespace

TuneSession::TuneSession(const Registry& registry, TuneOptions options, CandidateEvaluator* evaluator)
    : registry_(registry), options_(std::move(options)), targets_{options_.target}, evaluators_{evaluator} {}

TuneSession::TuneSession(const Registry& registry, TuneOptions options, std::vector<Target> targets,
                         std::vector<CandidateEvaluator*> evaluators)
    : registry_(registry),
      options_(std::move(options)),
      targets_(std::move(targets)),
      evaluators_(std::move(evaluators)) {
  if (!targets_.empty()) options_.target = targets_.front();
}

StatusOr<TuneReport> TuneSession::Run() {
  const auto session_start = Clock::now();
  if (targets_.empty() || targets_.size() != evaluators_.size()) {
    return absl::InvalidArgumentError("a tuning session needs one evaluator per device");
  }
  OPSCHED_ASSIGN_OR_RETURN(std::vector<SuiteEntry> suite, ReadSuite(options_.suite_path, registry_));
  // `known`: the log itself (what is resumed). `served`: what a Runtime loading the log
  // and the transfer logs would serve today (the seeds).
  records::Database known, served;
  served.SetLibraryUse([this](std::string_view name) { return registry_.LibraryUseOf(name); });
  if (access(options_.records_path.c_str(), F_OK) == 0) {
    OPSCHED_RETURN_IF_ERROR(Annotate(known.Load(options_.records_path), "resuming"));
    OPSCHED_RETURN_IF_ERROR(Annotate(served.Load(options_.records_path), "resuming"));
  }
  records::Database transfer;
  for (const std::string& path : options_.transfer_logs) {
    OPSCHED_RETURN_IF_ERROR(Annotate(served.Load(path), "loading transfer records"));
    OPSCHED_RETURN_IF_ERROR(Annotate(transfer.Load(path), "loading transfer records"));
  }
  std::unique_ptr<Selector> selector;
  if (!options_.model_file.empty()) {
    OPSCHED_ASSIGN_OR_RETURN(selector, Selector::Load(options_.model_file));
  }
  OPSCHED_ASSIGN_OR_RETURN(std::unique_ptr<LogSink> sink, LogSink::Open(options_.records_path));
  TuneReport report;
  report.session_id = options_.session_id.empty() ? RandomId() : options_.session_id;
  report.workloads.resize(suite.size());
  const int lanes = static_cast<int>(targets_.size());
  Progress progress(static_cast<int>(suite.size()), options_.progress, stderr, lanes);
  // Per lane: what a Runtime here would serve, and what it would with the records and
  // model of other devices of the arch (seeds only: measured here before any record is
  // written; null where there are none).
  std::vector<std::unique_ptr<Dispatcher>> dispatchers, other_devices;
  for (const Target& t : targets_) {
    const bool model_serves = selector != nullptr && selector->Serves(t, false).ok();
    const bool model_transfers = selector != nullptr && selector->Serves(t, true).ok();
    if (selector != nullptr && !model_serves) {
      fmt::print(stderr, "opsched tune: {}: the model does not serve {}: {}{}\n", options_.model_file,
                 t.device().ToString(), selector->Serves(t, false).message(),
                 model_transfers ? " (its choices are measured first, as seeds)" : "");
    }
    dispatchers.push_back(std::make_unique<Dispatcher>(registry_, t, &served, DispatchOptions{},
                                                       model_serves ? selector.get() : nullptr));
    other_devices.push_back(OtherDevicesDispatcher(registry_, t, &served, selector.get()));
  }

  std::atomic<size_t> next{0};
  std::atomic<size_t> finished{0};
  std::mutex error_mu;
  Status error;
  auto lane_loop = [&](int lane) {
    while (true) {
      {
        std::lock_guard<std::mutex> lock(error_mu);
        if (!error.ok()) return;
      }
      const size_t wi = next.fetch_add(1);
      if (wi >= suite.size()) return;
      const SuiteEntry& entry = suite[wi];
      WorkloadContext ctx;
      ctx.registry = &registry_;
      ctx.options = &options_;
      ctx.target = targets_[lane];
      ctx.evaluator = evaluators_[lane];
      ctx.sink = sink.get();
      ctx.known = &known;
      ctx.progress = &progress;
      ctx.lane = lane;
      ctx.session_id = report.session_id;
      if (entry.error.ok()) {
        ctx.seeds = SeedCandidates(*dispatchers[lane], entry.workload, other_devices[lane].get());
        ctx.transfer = TransferExamples(transfer, ctx.target, entry.workload);
      }
      if (options_.time_budget_s > 0) {
        // This workload's share of what is left, with every lane working in parallel.
        const double left = options_.time_budget_s - Since(session_start);
        const double waiting = static_cast<double>(suite.size() - finished.load());
        ctx.time_budget_s = std::max(1e-3, left * lanes / std::max(waiting, 1.0));
      }
      StatusOr<WorkloadResult> r = TuneWorkload(entry, static_cast<int>(wi), ctx);
      if (!r.ok()) {
        std::lock_guard<std::mutex> lock(error_mu);
        if (error.ok()) error = r.status();
        return;
      }
      r->device = targets_[lane].device().ToString();
      report.workloads[wi] = *std::move(r);
      finished.fetch_add(1);
    }
  };
  if (lanes == 1) {
    lane_loop(0);
  } else {
    std::vector<std::thread> threads;
    for (int lane = 0; lane < lanes; ++lane) threads.emplace_back(lane_loop, lane);
    for (std::thread& t : threads) t.join();
  }
  OPSCHED_RETURN_IF_ERROR(error);
  for (const WorkloadResult& r : report.workloads) report.measured += r.measured;
  report.seconds = Since(session_start);
  return report;
}

std::string TuneReport::ToString(size_t width) const {
  Table table({{.header = "line", .right = true},
               {.header = "workload", .min_width = 32, .importance = 2},
               {.header = "best implementation"},  // a name to copy: never cut
               {.header = "config", .min_width = 16, .importance = 3},
               {.header = "best us", .right = true, .importance = 5},
               {.header = "heuristic us", .right = true, .droppable = true, .importance = 1},
               {.header = "speedup", .right = true, .importance = 5},
               {.header = "trials", .right = true, .droppable = true, .importance = 1},
               {.header = "time s", .right = true, .droppable = true, .importance = 0}});
  for (const WorkloadResult& r : workloads) {
    if (!r.error.empty() && r.best_us == 0) {
      table.AddRow({std::to_string(r.line), r.workload, r.error});
      continue;
    }
    table.AddRow({std::to_string(r.line), r.workload, r.best_implementation, r.best_config,
                  fmt::format("{:.2f}", r.best_us), Figure(r.heuristic_us, "{:.2f}"),
                  Figure(r.heuristic_us > 0 ? r.heuristic_us / r.best_us : 0, "{:.2f}x"),
                  std::to_string(r.trials), fmt::format("{:.1f}", r.seconds)});
  }
  std::string out = table.ToString(width);
  out += fmt::format("session {}: {} candidates measured in {:.1f} s ({:.2f} per second)\n", session_id,
                     measured, seconds, seconds > 0 ? measured / seconds : 0.0);
  // With several devices, what each one measured.
  std::map<std::string, std::pair<int, int>> by_device;  // device -> (workloads, candidates)
  for (const WorkloadResult& r : workloads) {
    if (r.device.empty()) continue;
    ++by_device[r.device].first;
    by_device[r.device].second += r.measured;
  }
  if (by_device.size() > 1) {
    for (const auto& [device, n] : by_device) {
      out += fmt::format("  {}: {} workloads, {} candidates ({:.2f} per second)\n", device, n.first, n.second,
                         seconds > 0 ? n.second / seconds : 0.0);
    }
  }
  return out;
}

}  // namespace opsched
