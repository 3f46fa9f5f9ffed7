#include <map>
#include <memory>

#include "core/format.h"
#include "records/database.h"
#include "strategies/registry.h"
#include "tools/commands.h"
#include "tuner/study.h"

namespace opsched::tools {
namespace {

struct StudyFlags {
  std::string records;
  std::string workload;
  std::vector<std::string> policies = {"random", "xgb"};
  int seeds = 5;
  double within = 0.95;
};

int RunStudy(const StudyFlags& f) {
  StatusOr<Workload> w = Registry::Global().ParseCanonical(f.workload);
  if (!w.ok()) {
    fmt::print(stderr, "opsched study: {}\n", w.status().message());
    return 2;
  }
  records::Database db;
  if (Status s = db.Load(f.records); !s.ok()) {
    fmt::print(stderr, "opsched study: {}\n", s.message());
    return 2;
  }
  // The device with the most records of this workload.
  std::map<uint64_t, std::vector<const records::RecordEntry*>> by_target;
  for (const records::RecordEntry& e : db.entries()) {
    if (db.workload(e.workload).hash() == w->hash()) by_target[db.target(e.target).fingerprint()].push_back(&e);
  }
  if (by_target.empty()) {
    fmt::print(stderr, "opsched study: {} has no records of '{}'\n", f.records, w->ToString());
    return 2;
  }
  auto most = std::max_element(by_target.begin(), by_target.end(),
                               [](const auto& a, const auto& b) { return a.second.size() < b.second.size(); });
  std::vector<Candidate> candidates;
  std::vector<double> times;
  std::map<std::pair<std::string, std::string>, size_t> index;
  for (const records::RecordEntry* e : most->second) {
    Candidate c{db.implementation(e->implementation), db.config(e->config)};
    const double t = e->status == records::OK ? e->median_us : -1;
    auto [it, inserted] = index.emplace(std::make_pair(c.implementation, c.config.ToString()), candidates.size());
    if (inserted) {
      candidates.push_back(std::move(c));
      times.push_back(t);
    } else if (t > 0 && (times[it->second] <= 0 || t < times[it->second])) {
      times[it->second] = t;
    }
  }
  fmt::print("{}: {} measured candidates on {} ({})\n", w->ToString(), candidates.size(),
             db.target(most->second.front()->target).device_name(), f.records);
  fmt::print("{:<8} {:>10} {:>14}  trials per seed to reach {:.0f}% of the best\n", "policy", "best us", "mean trials",
             100 * f.within);
  for (const std::string& policy : f.policies) {
    StatusOr<StudyResult> r = ReplaySearch(policy, *w, candidates, times, f.seeds, f.within);
    if (!r.ok()) {
      fmt::print(stderr, "opsched study: {}: {}\n", policy, r.status().message());
      return 1;
    }
    fmt::print("{:<8} {:>10.2f} {:>14.1f}  {}\n", policy, r->best_us, r->mean_trials, fmt::join(r->trials_to_target, " "));
  }
  return 0;
}

}  // namespace

// `opsched study`: replays search policies over an exhaustive tuning log.
void AddStudyCommand(CLI::App& app, int* exit_code) {
  auto flags = std::make_shared<StudyFlags>();
  CLI::App* s = app.add_subcommand(
      "study", "Replay search policies over the records of an exhaustive run: trials to reach the best");
  s->add_option("--records", flags->records, "Log of a grid (exhaustive) tuning run")->required();
  s->add_option("--workload", flags->workload, "The workload line studied")->required();
  s->add_option("--policies", flags->policies, "Policies to compare (default random xgb)");
  s->add_option("--seeds", flags->seeds, "Seeds per policy (default 5)");
  s->add_option("--within", flags->within, "Target: time <= best / within (default 0.95)");
  s->callback([=] { *exit_code = RunStudy(*flags); });
}

}  // namespace opsched::tools
