#include "tuner/workload_tuner.h"

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <map>
#include <optional>
#include <set>

#include "core/format.h"
#include "core/version.h"
#include "records/call_time.h"
#include "records/convert.h"
#include "tuner/retry.h"
#include "tuner/search_policy.h"

namespace opsched {
namespace {

// Implementations with at most this many candidate configs are measured once up front.
constexpr int kCoverageMaxConfigs = 4;

using Clock = std::chrono::steady_clock;

double Since(Clock::time_point t) { return std::chrono::duration<double>(Clock::now() - t).count(); }

std::string Host() {
  char name[256] = {};
  gethostname(name, sizeof name - 1);
  return name;
}

}  // namespace

std::vector<TransferExample> TransferExamples(const records::Database& db, const Target& target,
                                              const Workload& canonical) {
  const uint64_t fp = target.fingerprint();
  const uint64_t arch = records::TargetKey::Of(target).arch;
  const uint64_t exclude = canonical.hash();
  // Per record target (index): 2 this target, 1 another device of its arch, 0 neither.
  std::vector<int> kinds;
  const auto kind_of = [&](uint32_t t) {
    if (t >= kinds.size()) kinds.resize(t + 1, -1);
    if (kinds[t] < 0) {
      const records::TargetProto& proto = db.target(t);
      kinds[t] = proto.fingerprint() == fp ? 2 : records::TargetKey::Of(proto).arch == arch ? 1 : 0;
    }
    return kinds[t];
  };
  std::vector<TransferExample> out[3];
  for (const records::RecordEntry& e : db.entries()) {
    const Workload& w = db.workload(e.workload);
    if (e.status != records::OK || w.op() != canonical.op() || w.hash() == exclude) continue;
    const int kind = kind_of(e.target);
    if (kind == 0 || out[kind].size() >= 20000) continue;
    out[kind].push_back({w, Candidate{db.implementation(e.implementation), db.config(e.config)}, e.call_us});
    if (out[2].size() >= 20000) break;  // enough of this target's own
  }
  // This target's records; where it has none of the op, another device's of the arch
  // (its times differ, its ranking of candidates mostly does not).
  return out[2].empty() ? std::move(out[1]) : std::move(out[2]);
}

CandidateSet EnumerateCandidates(const Registry& registry, const Workload& w, const Target& target,
                                 int64_t memory_budget, const std::vector<std::string>& only) {
  CandidateSet set;
  for (const Implementation* impl : registry.ImplementationsOf(w.op())) {
    if (!only.empty() && std::find(only.begin(), only.end(), impl->name()) == only.end()) continue;
    if (impl->device_kind() != target.kind || !impl->Applicable(w, target).ok()) continue;
    for (Config& config : impl->Space(w, target).Enumerate()) {
      const int64_t bytes = static_cast<int64_t>(impl->WorkspaceBytes(w, config));
      if (memory_budget > 0 && bytes > memory_budget) {
        ++set.over_budget;
        continue;
      }
      set.candidates.push_back(Candidate{std::string(impl->name()), std::move(config)});
      set.workspace.push_back(bytes);
    }
  }
  return set;
}

StatusOr<WorkloadResult> TuneWorkload(const SuiteEntry& entry, int index, const WorkloadContext& ctx) {
  const TuneOptions& options = *ctx.options;
  Progress* progress = ctx.progress;
  WorkloadResult result;
  result.line = entry.line;
  if (!entry.error.ok()) {
    result.workload = entry.text;
    result.error = std::string(Message(entry.error));
    progress->StartWorkload(ctx.lane, index, entry.text, 0);
    progress->FinishWorkload(ctx.lane, fmt::format("skipped: {}", result.error));
    return result;
  }
  const Workload& w = entry.workload;
  result.workload = w.ToString();
  const auto workload_start = Clock::now();
  CandidateSet set = EnumerateCandidates(*ctx.registry, w, ctx.target, options.memory_budget, options.implementations);
  const std::vector<Candidate>& candidates = set.candidates;
  result.over_budget = set.over_budget;
  result.candidates = static_cast<int>(candidates.size());
  if (candidates.empty()) {
    result.error = result.over_budget > 0 ? "every candidate exceeds the memory budget"
                                          : options.implementations.empty()
                                              ? "no implementation applies on this target"
                                              : "none of --implementations applies on this target";
    progress->StartWorkload(ctx.lane, index, result.workload, 0);
    progress->FinishWorkload(ctx.lane, fmt::format("{}: {}", result.workload, result.error));
    return result;
  }
  auto find = [&](const Candidate& c) -> std::optional<size_t> {
    for (size_t i = 0; i < candidates.size(); ++i) {
      if (candidates[i] == c) return i;
    }
    return std::nullopt;
  };
  // The rule's choice is the baseline every report compares with.
  std::optional<size_t> heuristic;
  for (const Seed& s : ctx.seeds) {
    if (s.source == "heuristic" && !heuristic) {
      result.heuristic = fmt::format("{} {}", s.candidate.implementation, s.candidate.config.ToString());
      heuristic = find(s.candidate);
    }
  }
  PolicyOptions po;
  po.seed = options.seed + static_cast<uint64_t>(index);
  po.transfer = ctx.transfer;
  OPSCHED_ASSIGN_OR_RETURN(std::unique_ptr<SearchPolicy> policy,
                           MakeSearchPolicy(options.policy, w, candidates, po));

  // Results so far: from the log (resume), then measured.
  std::vector<double> time(candidates.size(), 0);  // 0 unknown, <0 failed, >0 median
  std::map<std::pair<std::string, std::string>, std::vector<LoggedResult>> logged;
  if (ctx.known != nullptr) {
    for (const records::RecordEntry* e : ctx.known->RecordsFor(w.hash(), ctx.target.fingerprint())) {
      const auto key =
          std::make_pair(ctx.known->implementation(e->implementation), ctx.known->config(e->config).ToString());
      logged[key].push_back(LoggedResult{e->status, e->attempt, e->call_us});
    }
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
    const RetryDecision d = DecideRetry(it->second, options.no_retry);
    if (d.measure) {
      attempt[i] = d.attempt;
      retries.push_back(i);
      continue;
    }
    note(i, d.known_us);
    ++result.resumed;
  }
  const int plan = std::min<int>(options.trials, static_cast<int>(candidates.size()));
  progress->StartWorkload(ctx.lane, index, result.workload, plan);
  bool out_of_time = false;
  auto stop = [&] {
    if (result.trials >= plan) return true;
    if (options.early_stop > 0 && best > 0 && since_improvement >= options.early_stop) return true;
    if (ctx.time_budget_s > 0 && Since(workload_start) >= ctx.time_budget_s) return out_of_time = true;
    return false;
  };
  EvaluateOptions eo;
  eo.measure = options.measure;
  eo.generator = options.generator;
  eo.verification = options.verification;
  eo.seed = options.seed * 1000003 + static_cast<uint64_t>(index);
  const records::TargetProto target_proto = records::ToProto(ctx.target);
  const std::string host = Host();
  auto measure = [&](size_t i, std::string_view policy_name) -> Status {
    eo.measure.cutoff_us = options.cutoff_factor > 0 && best > 0 ? options.cutoff_factor * best : 0;
    const Evaluation e = ctx.evaluator->Evaluate(w, candidates[i], eo);
    records::Record r;
    r.set_format_version(1);
    *r.mutable_workload() = records::ToProto(w);
    *r.mutable_target() = target_proto;
    r.set_implementation(candidates[i].implementation);
    *r.mutable_config() = records::ToProto(candidates[i].config);
    *r.mutable_stats() = ToProto(e.stats);
    r.set_status(e.status);
    r.set_message(e.message);
    r.set_workspace_bytes(e.workspace_bytes ? e.workspace_bytes : set.workspace[i]);
    r.set_attempt(attempt[i]);
    records::ProvenanceProto* p = r.mutable_provenance();
    p->set_search_policy(std::string(policy_name));
    p->set_trial_index(result.trials);
    p->set_session_id(ctx.session_id);
    p->set_timestamp_unix_us(std::chrono::duration_cast<std::chrono::microseconds>(
                                 std::chrono::system_clock::now().time_since_epoch())
                                 .count());
    p->set_opsched_version(kVersion);
    p->set_host(host);
    p->set_planned_trials(plan);
    p->set_candidates(result.candidates);
    OPSCHED_RETURN_IF_ERROR(ctx.sink->Append(r));
    ++result.measured;
    note(i, e.status == records::OK ? records::CallUs(e.stats.median_us, e.stats.host_us) : -1);
    progress->Update(ctx.lane, result.trials, best,
                     best > 0 ? fmt::format("{} {}", candidates[best_index].implementation,
                                            candidates[best_index].config.ToString())
                              : "");
    return absl::OkStatus();
  };
  // The seeds come first, even when the time budget is spent: what the Runtime serves
  // today, so that the new best record is never worse than it; the rule's choice, the
  // baseline of every report; the vendor's own pick.
  for (const Seed& s : ctx.seeds) {
    const std::optional<size_t> i = find(s.candidate);
    if (i && time[*i] == 0 && result.trials < plan) OPSCHED_RETURN_IF_ERROR(measure(*i, s.source));
  }
  for (size_t i : retries) {
    if (time[i] == 0 && !stop()) OPSCHED_RETURN_IF_ERROR(measure(i, "retry"));
  }
  // Coverage: an implementation with a handful of configs (a vendor library, a kernel
  // without knobs) gets its first one measured before the policy spends the rest, so
  // that a search drawn towards the largest spaces never leaves it out. Large spaces
  // are left to the policy: their first config can be pathological (one thread doing
  // everything) and would spend the workload's time.
  if (options.policy != "grid") {
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
    std::vector<size_t> batch = policy->Next(std::min<size_t>(options.batch, plan - result.trials));
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
  progress->FinishWorkload(
      ctx.lane, best > 0 ? fmt::format("{}: {} {} {:.2f} us ({} trials, {:.1f} s)", result.workload,
                                       result.best_implementation, result.best_config, best, result.trials,
                                       result.seconds)
                         : fmt::format("{}: {}", result.workload, result.error));
  return result;
}

}  // namespace opsched
