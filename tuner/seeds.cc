#include "tuner/seeds.h"

#include <algorithm>

namespace opsched {

std::vector<Seed> SeedCandidates(const Dispatcher& served, const Workload& canonical) {
  std::vector<Seed> seeds;
  auto add = [&](const Decision& d, std::string source) {
    if (d.implementation == nullptr) return;
    Candidate c{std::string(d.implementation->name()), d.config};
    if (std::none_of(seeds.begin(), seeds.end(), [&](const Seed& s) { return s.candidate == c; })) {
      seeds.push_back(Seed{std::move(c), std::move(source)});
    }
  };
  if (StatusOr<Explanation> e = served.Explain(canonical); e.ok()) {
    add(e->decision, e->decision.provenance == Provenance::kHeuristic ? "heuristic" : "served");
  }
  if (StatusOr<Decision> rule = served.Heuristic(canonical); rule.ok()) add(*rule, "heuristic");
  return seeds;
}

}  // namespace opsched
