#include "tuner/holdout.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <memory>
#include <set>

#include "core/format.h"
#include "core/table.h"
#include "records/convert.h"
#include "selector/model_file.h"
#include "selector/selector.h"
#include "selector/train.h"

namespace opsched {
namespace {

// What one (workload, target) pair of the records holds.
struct Tuned {
  const Workload* workload = nullptr;
  uint32_t target = 0;  // index into the database's targets
  OfflineSpace space;
  std::map<std::pair<std::string, std::string>, double> ok_us;  // (impl, config) -> best ok median
  double best_us = 0;
  int records = 0;
};

}  // namespace

StatusOr<HoldoutReport> RunHoldout(const Registry& registry, const records::Database& db,
                                   const HoldoutOptions& options) {
  // Every (workload, target) with an ok record, and what its records say.
  std::map<std::pair<uint64_t, uint32_t>, Tuned> tuned;
  for (const records::RecordEntry& e : db.entries()) {
    const Workload& w = db.workload(e.workload);
    if (registry.FindOp(w.op()) == nullptr) continue;
    Tuned& t = tuned[{w.hash(), e.target}];
    t.workload = &w;
    t.target = e.target;
    ++t.records;
    Candidate c{db.implementation(e.implementation), db.config(e.config)};
    const std::pair<std::string, std::string> key{c.implementation, c.config.ToString()};
    if (std::find(t.space.candidates.begin(), t.space.candidates.end(), c) == t.space.candidates.end()) {
      t.space.candidates.push_back(c);
    }
    if (StatusOr<records::Record> r = db.Fetch(e); r.ok()) {
      const std::string& policy = r->provenance().search_policy();
      if (policy == "heuristic" && !t.space.rule) t.space.rule = c;
      if (policy == "vendor" && !t.space.vendor) t.space.vendor = c;
    }
    if (e.status == records::OK && e.call_us > 0) {
      auto [it, inserted] = t.ok_us.emplace(key, e.call_us);
      if (!inserted) it->second = std::min<double>(it->second, e.call_us);
      t.best_us = t.best_us == 0 ? e.call_us : std::min<double>(t.best_us, e.call_us);
    }
  }
  std::vector<Tuned*> order;
  for (auto& [key, t] : tuned) {
    if (t.best_us > 0) order.push_back(&t);
  }
  if (order.empty()) return absl::NotFoundError("the records hold no tuned workload");

  std::unique_ptr<Selector> given;
  if (!options.model_file.empty()) {
    OPSCHED_ASSIGN_OR_RETURN(given, Selector::Load(options.model_file));
  }
  std::set<uint64_t> given_saw;
  if (given != nullptr) {
    // (Selector keeps its training workloads per op in the model file.)
    StatusOr<selector::SelectorModelProto> full = selector::ReadModel(options.model_file);
    if (full.ok()) {
      for (const selector::OpModel& m : full->ops()) {
        for (const selector::TrainingWorkload& w : m.workloads()) given_saw.insert(w.hash());
      }
    }
  }
  // Folds of distinct workloads: a workload's fold is its hash modulo the folds, so that
  // records of new workloads leave every other workload in its fold (by position in the
  // sorted hashes, 7 added workloads moved most of 175 to other folds, and their models'
  // decisions with them: 1.069 -> 1.116 with no decision of the 175 measured again).
  std::vector<uint64_t> hashes;
  for (Tuned* t : order) hashes.push_back(t->workload->hash());
  std::sort(hashes.begin(), hashes.end());
  hashes.erase(std::unique(hashes.begin(), hashes.end()), hashes.end());
  const int folds = given != nullptr ? 1 : std::clamp<int>(options.folds, 1, static_cast<int>(hashes.size()));
  HoldoutReport report;
  for (int fold = 0; fold < folds; ++fold) {
    std::set<uint64_t> hidden;
    for (size_t i = 0; i < hashes.size(); ++i) {
      if (given != nullptr || static_cast<int>(hashes[i] % static_cast<uint64_t>(folds)) == fold) hidden.insert(hashes[i]);
    }
    std::unique_ptr<Selector> trained;
    const Selector* selector = given.get();
    if (given == nullptr) {
      TrainOptions to;
      to.exclude = hidden;
      to.target_kind = db.target(order.front()->target).kind();
      StatusOr<selector::SelectorModelProto> model = TrainSelector(registry, {&db}, to);
      if (model.ok()) {
        OPSCHED_ASSIGN_OR_RETURN(trained, Selector::FromProto(*model));
        selector = trained.get();
      }
    }
    for (Tuned* t : order) {
      const uint64_t h = t->workload->hash();
      if (given == nullptr && !hidden.count(h)) continue;
      OPSCHED_ASSIGN_OR_RETURN(Target target, records::FromProto(db.target(t->target)));
      DispatchOptions d = options.dispatch;
      // Hide every workload of the fold: what its model never saw, the dispatcher never sees.
      d.hidden_workloads = given != nullptr ? std::set<uint64_t>{h} : hidden;
      const OfflineSpace* space = &t->space;
      d.offline = [space](const Workload&) { return space; };
      const Dispatcher dispatcher(registry, target, &db, d, selector);
      HoldoutEntry entry;
      entry.workload = t->workload->ToString();
      entry.device = target.device_name;
      entry.best_us = t->best_us;
      entry.records = t->records;
      entry.model_saw_it = given != nullptr && given_saw.count(h) > 0;
      StatusOr<Explanation> e = dispatcher.Explain(*t->workload);
      if (!options.explain.empty() && entry.workload.find(options.explain) != std::string::npos) {
        entry.explanation = e.ok() ? e->ToString() : std::string(e.status().message());
      }
      if (e.ok()) {
        entry.provenance = std::string(ProvenanceName(e->decision.provenance));
        entry.served = fmt::format("{} {}", e->decision.implementation->name(), e->decision.config.ToString());
        auto it = t->ok_us.find({std::string(e->decision.implementation->name()), e->decision.config.ToString()});
        if (it != t->ok_us.end()) entry.served_us = it->second;
      } else {
        entry.provenance = "none";
        entry.served = std::string(e.status().message());
      }
      report.entries.push_back(std::move(entry));
    }
  }
  std::sort(report.entries.begin(), report.entries.end(),
            [](const HoldoutEntry& a, const HoldoutEntry& b) { return a.workload < b.workload; });
  double log_sum = 0;
  int known = 0;
  for (const HoldoutEntry& e : report.entries) {
    report.model_saw += e.model_saw_it;
    if (e.served_us <= 0) {
      ++report.unknown;
      continue;
    }
    const double ratio = e.served_us / e.best_us;
    log_sum += std::log(ratio);
    report.worst = std::max(report.worst, ratio);
    ++known;
  }
  report.geomean = known > 0 ? std::exp(log_sum / known) : 0;
  return report;
}

std::string HoldoutReport::ToString(size_t width) const {
  Table table({{.header = "ratio", .right = true},
               {.header = "served us", .right = true},
               {.header = "best us", .right = true},
               {.header = "provenance", .min_width = 10, .importance = 1},
               {.header = "served", .min_width = 24, .importance = 2},
               {.header = "model saw it"},
               {.header = "workload", .min_width = 32, .importance = 3}});
  for (const HoldoutEntry& e : entries) {
    table.AddRow({e.served_us > 0 ? fmt::format("{:.3f}", e.served_us / e.best_us) : "unknown",
                  Figure(e.served_us, "{:.2f}"), fmt::format("{:.2f}", e.best_us),
                  e.provenance, e.served, e.model_saw_it ? "yes" : "", e.workload});
  }
  std::string out = table.ToString(width);
  if (model_saw > 0) {
    out += fmt::format("note: the given model was trained with {} of these {} workloads: their figures flatter it\n",
                       model_saw, entries.size());
  }
  out += fmt::format("holdout: {} workloads, geomean served/best {:.3f}, worst {:.3f}, unknown {}\n", entries.size(),
                     geomean, worst, unknown);
  return out;
}

}  // namespace opsched
