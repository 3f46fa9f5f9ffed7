#include <map>
#include <memory>

#include "core/format.h"
#include "core/table.h"
#include "records/convert.h"
#include "records/database.h"
#include "registry/registry.h"
#include "tools/commands.h"
#include "tuner/holdout.h"
#include "tuner/study.h"
#include "tuner/workload_tuner.h"

namespace opsched::tools {
namespace {

struct StudyFlags {
  std::vector<std::string> records;
  std::string workload;
  bool holdout = false;
  std::string model;
  std::string explain;
  int folds = 10;
  double model_max_distance = DispatchOptions{}.model_max_distance;
  std::vector<std::string> policies = {"random", "xgb"};
  int seeds = 5;
  double within = 0.95;
  size_t width = kTableWidth;
};

int RunHoldoutStudy(const StudyFlags& f, const records::Database& db) {
  HoldoutOptions o;
  o.model_file = f.model;
  o.folds = f.folds;
  o.dispatch.model_max_distance = f.model_max_distance;
  o.explain = f.explain;
  StatusOr<HoldoutReport> report = RunHoldout(Registry::Global(), db, o);
  if (!report.ok()) {
    fmt::print(stderr, "opsched study: {}\n", report.status().message());
    return 2;
  }
  for (const HoldoutEntry& e : report->entries) {
    if (!e.explanation.empty()) fmt::print("hidden: {}\n{}\n", e.workload, e.explanation);
  }
  std::fputs(report->ToString(f.width).c_str(), stdout);
  return 0;
}

int RunStudy(const StudyFlags& f) {
  records::Database db;
  for (const std::string& path : f.records) {
    if (Status s = db.Load(path); !s.ok()) {
      fmt::print(stderr, "opsched study: {}\n", s.message());
      return 2;
    }
  }
  if (f.holdout) return RunHoldoutStudy(f, db);
  if (f.workload.empty()) {
    fmt::print(stderr, "opsched study: give --workload LINE (or --holdout)\n");
    return 2;
  }
  StatusOr<Workload> w = Registry::Global().ParseCanonical(f.workload);
  if (!w.ok()) {
    fmt::print(stderr, "opsched study: {}\n", w.status().message());
    return 2;
  }
  // The device with the most records of this workload.
  std::map<uint64_t, std::vector<const records::RecordEntry*>> by_target;
  for (const records::RecordEntry& e : db.entries()) {
    if (db.workload(e.workload).hash() == w->hash()) by_target[db.target(e.target).fingerprint()].push_back(&e);
  }
  if (by_target.empty()) {
    fmt::print(stderr, "opsched study: {} has no records of '{}'\n", fmt::join(f.records, ", "), w->ToString());
    return 2;
  }
  auto most = std::max_element(by_target.begin(), by_target.end(),
                               [](const auto& a, const auto& b) { return a.second.size() < b.second.size(); });
  std::vector<Candidate> candidates;
  std::vector<double> times;
  std::map<std::pair<std::string, std::string>, size_t> index;
  for (const records::RecordEntry* e : most->second) {
    Candidate c{db.implementation(e->implementation), db.config(e->config)};
    const double t = e->status == records::OK ? e->call_us : -1;
    auto [it, inserted] = index.emplace(std::make_pair(c.implementation, c.config.ToString()), candidates.size());
    if (inserted) {
      candidates.push_back(std::move(c));
      times.push_back(t);
    } else if (t > 0 && (times[it->second] <= 0 || t < times[it->second])) {
      times[it->second] = t;
    }
  }
  const records::TargetProto& measured_on = db.target(most->second.front()->target);
  fmt::print("{}: {} measured candidates on {} ({})\n", w->ToString(), candidates.size(), measured_on.device_name(),
             fmt::join(f.records, ", "));
  // A study counts trials to the best of what was measured: only an exhaustive log makes
  // that the workload's best.
  if (StatusOr<Target> target = records::FromProto(measured_on); target.ok()) {
    const CandidateSet legal = EnumerateCandidates(Registry::Global(), *w, *target, /*memory_budget=*/0);
    size_t measured = 0;
    for (const Candidate& c : legal.candidates) measured += index.count({c.implementation, c.config.ToString()});
    if (measured < legal.candidates.size()) {
      fmt::print(stderr,
                 "opsched study: warning: {} hold {} of the {} legal candidates of this workload on {}: not an "
                 "exhaustive run, so the best is only the best measured (opsched tune --policy grid --trials {} "
                 "measures them all)\n",
                 fmt::join(f.records, ", "), measured, legal.candidates.size(), measured_on.device_name(),
                 legal.candidates.size());
    }
  }
  Table table({{.header = "policy"},
               {.header = "best us", .right = true},
               {.header = "mean trials", .right = true},
               {.header = fmt::format("trials per seed to reach {:.0f}% of the best", 100 * f.within), .min_width = 20}});
  for (const std::string& policy : f.policies) {
    StatusOr<StudyResult> r = ReplaySearch(policy, *w, candidates, times, f.seeds, f.within);
    if (!r.ok()) {
      fmt::print(stderr, "opsched study: {}: {}\n", policy, r.status().message());
      return 1;
    }
    table.AddRow({policy, fmt::format("{:.2f}", r->best_us), fmt::format("{:.1f}", r->mean_trials),
                  fmt::format("{}", fmt::join(r->trials_to_target, " "))});
  }
  table.Print(stdout, f.width);
  return 0;
}

}  // namespace

// `opsched study`: replays search policies over an exhaustive tuning log.
void AddStudyCommand(CLI::App& app, int* exit_code) {
  auto flags = std::make_shared<StudyFlags>();
  CLI::App* s = app.add_subcommand(
      "study",
      "Replay search policies over an exhaustive run (trials to reach the best), or judge decisions of workloads "
      "hidden in turn (--holdout)");
  s->add_option("--records", flags->records, "Record logs (a grid run for a policy study)")->required();
  s->add_option("--workload", flags->workload, "The workload line studied (policy study)");
  s->add_flag("--holdout", flags->holdout,
              "Hide each tuned workload in turn, decide it from the rest, compare with its best record");
  s->add_option("--model", flags->model,
                "--holdout: this selector model (default: one trained per fold without the hidden workloads)");
  s->add_option("--folds", flags->folds, "--holdout: folds of workloads trained without")->capture_default_str();
  s->add_option("--explain", flags->explain,
                "--holdout: print how the dispatcher decided each hidden workload whose line contains this text");
  s->add_option("--model-max-distance", flags->model_max_distance,
                "--holdout: the dispatcher trusts the model up to this distance from its training data")
      ->capture_default_str();
  s->add_option("--policies", flags->policies, "Policies to compare")->capture_default_str();
  s->add_option("--seeds", flags->seeds, "Seeds per policy")->capture_default_str();
  s->add_option("--within", flags->within, "Target: time <= best / within")->capture_default_str();
  AddWideFlag(s, &flags->width);
  s->callback([=] { *exit_code = RunStudy(*flags); });
}

}  // namespace opsched::tools
