#include "tuner/session.h"

#include <unistd.h>

#include <chrono>
#include <map>
#include <set>
#include <random>

#include "core/format.h"
#include "core/version.h"
#include "records/convert.h"
#include "records/database.h"
#include "records/log_writer.h"
#include "strategies/dispatcher.h"
#include "tuner/progress.h"
#include "tuner/retry.h"
#include "tuner/search_policy.h"
#include "tuner/suite.h"

namespace opsched {
namespace {

// Implementations with at most this many candidate configs are measured once up front.
constexpr int kCoverageMaxConfigs = 4;

using Clock = std::chrono::steady_clock;

double Since(Clock::time_point t) { return std::chrono::duration<double>(Clock::now() - t).count(); }

std::string RandomId() {
  std::random_device rd;
  return fmt::format("{:08x}{:08x}", rd(), rd());
}

std::string Host() {
  char name[256] = {};
  gethostname(name, sizeof name - 1);
  return name;
}

std::vector<TransferExample> LoadTransfer(const std::vector<std::string>& logs, const Target& target,
                                          std::string_view op, uint64_t exclude) {
  std::vector<TransferExample> out;
  for (const std::string& path : logs) {
    records::Database db;
    if (!db.Load(path).ok()) continue;
    const uint64_t fp = target.fingerprint();
    for (const records::RecordEntry& e : db.entries()) {
      const Workload& w = db.workload(e.workload);
      if (e.status != records::OK || w.op() != op || w.hash() == exclude ||
          db.target(e.target).fingerprint() != fp) {
        continue;
      }
      out.push_back({w, Candidate{db.implementation(e.implementation), db.config(e.config)}, e.median_us});
      if (out.size() >= 20000) return out;
    }
  }
  return out;
}

}  // namespace

TuneSession::TuneSession(const Registry& registry, TuneOptions options, CandidateEvaluator* evaluator)
    : registry_(registry), options_(std::move(options)), evaluator_(evaluator) {}

StatusOr<TuneReport> TuneSession::Run() {
  const auto session_start = Clock::now();
  OPSCHED_ASSIGN_OR_RETURN(std::vector<SuiteEntry> suite, ReadSuite(options_.suite_path, registry_));
  records::Database known;
  if (access(options_.records_path.c_str(), F_OK) == 0) {
    OPSCHED_RETURN_IF_ERROR(Annotate(known.Load(options_.records_path), "resuming"));
  }
  OPSCHED_ASSIGN_OR_RETURN(auto writer, records::LogWriter::Open(options_.records_path));
  TuneReport report;
  report.session_id = options_.session_id.empty() ? RandomId() : options_.session_id;
  const records::TargetProto target_proto = records::ToProto(options_.target);
  const uint64_t fingerprint = options_.target.fingerprint();
  const Dispatcher heuristics(registry_, options_.target, nullptr, DispatchOptions{});
  Progress progress(static_cast<int>(suite.size()), options_.progress);

  for (size_t wi = 0; wi < suite.size(); ++wi) {
    const SuiteEntry& entry = suite[wi];
    WorkloadResult result;
    result.line = entry.line;
    if (!entry.error.ok()) {
      result.workload = entry.text;
      result.error = std::string(Message(entry.error));
      progress.FinishWorkload(fmt::format("skipped: {}", result.error));
      report.workloads.push_back(std::move(result));
      continue;
    }
    const Workload& w = entry.workload;
    result.workload = w.ToString();
    const auto workload_start = Clock::now();

    // Every applicable implementation with every config of its space, within budget.
    std::vector<Candidate> candidates;
    std::vector<int64_t> workspace;
    for (const Implementation* impl : registry_.ImplementationsOf(w.op())) {
      if (impl->device_kind() != options_.target.kind || !impl->Applicable(w, options_.target).ok()) continue;
      for (Config& config : impl->Space(w, options_.target).Enumerate()) {
        const int64_t bytes = static_cast<int64_t>(impl->WorkspaceBytes(w, config));
        if (options_.memory_budget > 0 && bytes > options_.memory_budget) {
          ++result.over_budget;
          continue;
        }
        candidates.push_back(Candidate{std::string(impl->name()), std::move(config)});
        workspace.push_back(bytes);
      }
    }
    result.candidates = static_cast<int>(candidates.size());
    if (candidates.empty()) {
      result.error = result.over_budget > 0 ? "every candidate exceeds the memory budget"
                                            : "no implementation applies on this target";
      progress.FinishWorkload(fmt::format("{}: {}", result.workload, result.error));
      report.workloads.push_back(std::move(result));
      continue;
    }
    // The heuristic choice is measured first: the baseline the tuned choice must beat.
    std::optional<size_t> heuristic;
    if (StatusOr<Decision> d = heuristics.Heuristic(w); d.ok()) {
      result.heuristic = fmt::format("{} {}", d->implementation->name(), d->config.ToString());
      for (size_t i = 0; i < candidates.size(); ++i) {
        if (candidates[i].implementation == d->implementation->name() && candidates[i].config == d->config) {
          heuristic = i;
        }
      }
    }
    PolicyOptions po;
    po.seed = options_.seed + wi;
    po.transfer = LoadTransfer(options_.transfer_logs, options_.target, w.op(), w.hash());
    OPSCHED_ASSIGN_OR_RETURN(std::unique_ptr<SearchPolicy> policy,
                             MakeSearchPolicy(options_.policy, w, candidates, po));

    // Results so far: from the log (resume), then measured.
    std::vector<double> time(candidates.size(), 0);  // 0 unknown, <0 failed, >0 median
    std::map<std::pair<std::string, std::string>, std::vector<LoggedResult>> logged;
    for (const records::RecordEntry* e : known.RecordsFor(w.hash(), fingerprint)) {
      const auto key = std::make_pair(known.implementation(e->implementation), known.config(e->config).ToString());
      logged[key].push_back(LoggedResult{e->status, e->attempt, e->median_us});
    }
    double best = 0;
    size_t best_index = 0;
    int since_improvement = 0;
    auto note = [&](size_t i, double t) {
      time[i] = t;
      ++result.trials;
      if (t <= 0) ++result.failures;
      if (t > 0 && (best == 0 || t < best * 0.999)) {
        since_improvement = 0;
      } else {
        ++since_improvement;
      }
      if (t > 0 && (best == 0 || t < best)) {
        best = t;
        best_index = i;
      }
      policy->Observe(i, t);
    };
    std::vector<int> attempt(candidates.size(), 1);
    std::vector<size_t> retries;  // logged timeouts and crashes due another measurement
    for (size_t i = 0; i < candidates.size(); ++i) {
      auto it = logged.find({candidates[i].implementation, candidates[i].config.ToString()});
      if (it == logged.end()) continue;
      const RetryDecision d = DecideRetry(it->second, options_.no_retry);
      if (d.measure) {
        attempt[i] = d.attempt;
        retries.push_back(i);
        continue;
      }
      note(i, d.known_us);
      ++result.resumed;
    }
    const int plan = std::min<int>(options_.trials, static_cast<int>(candidates.size()));
    progress.StartWorkload(static_cast<int>(wi), result.workload, plan);
    const double workload_budget =
        options_.time_budget_s > 0
            ? (options_.time_budget_s - Since(session_start)) / static_cast<double>(suite.size() - wi)
            : 0;
    bool out_of_time = false;
    auto stop = [&] {
      if (result.trials >= plan) return true;
      if (options_.early_stop > 0 && best > 0 && since_improvement >= options_.early_stop) return true;
      if (options_.time_budget_s > 0 && Since(workload_start) >= workload_budget) return out_of_time = true;
      return false;
    };
    EvaluateOptions eo;
    eo.measure = options_.measure;
    eo.generator = options_.generator;
    eo.seed = options_.seed * 1000003 + wi;
    auto measure = [&](size_t i, std::string_view policy_name) {
      const Evaluation e = evaluator_->Evaluate(w, candidates[i], eo);
      records::Record r;
      r.set_format_version(1);
      *r.mutable_workload() = records::ToProto(w);
      *r.mutable_target() = target_proto;
      r.set_implementation(candidates[i].implementation);
      *r.mutable_config() = records::ToProto(candidates[i].config);
      records::StatsProto* s = r.mutable_stats();
      s->set_median_us(e.stats.median_us);
      s->set_min_us(e.stats.min_us);
      s->set_max_us(e.stats.max_us);
      s->set_mean_us(e.stats.mean_us);
      s->set_stddev_us(e.stats.stddev_us);
      s->set_repeats(e.stats.repeats);
      s->set_warmups(e.stats.warmups);
      r.set_status(e.status);
      r.set_message(e.message);
      r.set_workspace_bytes(e.workspace_bytes ? e.workspace_bytes : workspace[i]);
      r.set_attempt(attempt[i]);
      records::ProvenanceProto* p = r.mutable_provenance();
      p->set_search_policy(std::string(policy_name));
      p->set_trial_index(result.trials);
      p->set_session_id(report.session_id);
      p->set_timestamp_unix_us(std::chrono::duration_cast<std::chrono::microseconds>(
                                   std::chrono::system_clock::now().time_since_epoch())
                                   .count());
      p->set_opsched_version(kVersion);
      p->set_host(Host());
      Status appended = writer->Append(r);
      if (!appended.ok()) return appended;
      ++report.measured;
      note(i, e.status == records::OK ? e.stats.median_us : -1);
      progress.Update(result.trials, best,
                      best > 0 ? fmt::format("{} {}", candidates[best_index].implementation,
                                             candidates[best_index].config.ToString())
                               : "");
      return absl::OkStatus();
    };
    // The heuristic is the baseline every report compares with: it is measured even when
    // the time budget is spent.
    if (heuristic && time[*heuristic] == 0 && result.trials < plan) {
      OPSCHED_RETURN_IF_ERROR(measure(*heuristic, "heuristic"));
    }
    for (size_t i : retries) {
      if (time[i] == 0 && !stop()) OPSCHED_RETURN_IF_ERROR(measure(i, "retry"));
    }
    // Coverage: an implementation with a handful of configs (a vendor library, a kernel
    // without knobs) gets its first one measured before the policy spends the rest, so
    // that a search drawn towards the largest spaces never leaves it out. Large spaces
    // are left to the policy: their first config can be pathological (one thread doing
    // everything) and would spend the workload's time.
    if (options_.policy != "grid") {
      std::map<std::string, int> space_size;
      for (const Candidate& c : candidates) ++space_size[c.implementation];
      std::set<std::string> covered;
      for (size_t i = 0; i < candidates.size(); ++i) {
        if (time[i] != 0) covered.insert(candidates[i].implementation);
      }
      for (size_t i = 0; i < candidates.size() && !stop(); ++i) {
        if (space_size[candidates[i].implementation] <= kCoverageMaxConfigs &&
            covered.insert(candidates[i].implementation).second) {
          OPSCHED_RETURN_IF_ERROR(measure(i, "coverage"));
        }
      }
    }
    while (!stop()) {
      std::vector<size_t> batch = policy->Next(std::min<size_t>(options_.batch, plan - result.trials));
      if (batch.empty()) break;
      for (size_t i : batch) {
        if (time[i] != 0) continue;  // known from the log or measured already
        if (stop()) break;
        OPSCHED_RETURN_IF_ERROR(measure(i, policy->name()));
      }
    }
    if (heuristic && time[*heuristic] > 0) result.heuristic_us = time[*heuristic];
    if (best > 0) {
      result.best_implementation = candidates[best_index].implementation;
      result.best_config = candidates[best_index].config.ToString();
      result.best_us = best;
    } else {
      result.error = out_of_time && result.trials == result.failures
                         ? "the time budget ran out before a candidate succeeded"
                         : "no candidate succeeded";
    }
    result.seconds = Since(workload_start);
    progress.FinishWorkload(
        best > 0 ? fmt::format("{}: {} {} {:.2f} us ({} trials, {:.1f} s)", result.workload,
                               result.best_implementation, result.best_config, best, result.trials,
                               result.seconds)
                 : fmt::format("{}: {}", result.workload, result.error));
    report.workloads.push_back(std::move(result));
  }
  report.seconds = Since(session_start);
  return report;
}

std::string TuneReport::ToString() const {
  std::string out = fmt::format("{:<4} {:<70} {:<26} {:<36} {:>10} {:>12} {:>8} {:>7} {:>8}\n", "line",
                                "workload", "best implementation", "config", "best us",
                                "heuristic us", "speedup", "trials", "time s");
  for (const WorkloadResult& r : workloads) {
    const std::string w = r.workload.size() > 70 ? r.workload.substr(0, 67) + "..." : r.workload;
    if (!r.error.empty() && r.best_us == 0) {
      out += fmt::format("{:<4} {:<70} {}\n", r.line, w, r.error);
      continue;
    }
    out += fmt::format("{:<4} {:<70} {:<26} {:<36} {:>10.2f} {:>12} {:>8} {:>7} {:>8.1f}\n", r.line, w,
                       r.best_implementation, r.best_config, r.best_us,
                       r.heuristic_us > 0 ? fmt::format("{:.2f}", r.heuristic_us) : "-",
                       r.heuristic_us > 0 ? fmt::format("{:.2f}x", r.heuristic_us / r.best_us) : "-",
                       r.trials, r.seconds);
  }
  out += fmt::format("session {}: {} candidates measured in {:.1f} s ({:.2f} per second)\n", session_id,
                     measured, seconds, seconds > 0 ? measured / seconds : 0.0);
  return out;
}

}  // namespace opsched
