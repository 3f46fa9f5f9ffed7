// On the H200 logs the holdout study went from 1.092 to 1.080 with the check that a
// candidate runs at the neighbour, its worst workload from 4.39 to 1.94 (docs/selector.md).
#include "strategies/neighbour_blend.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <optional>
#include <string>

namespace opsched {

std::vector<std::vector<char>> RunsAtNeighbours(const Registry& registry, const Target& target,
                                                const std::vector<Selector::Neighbour>& near,
                                                const std::vector<Candidate>& candidates) {
  std::vector<std::vector<char>> runs(near.size(), std::vector<char>(candidates.size(), 1));
  for (size_t n = 0; n < near.size(); ++n) {
    StatusOr<Workload> there = registry.ParseCanonical(near[n].workload);
    if (!there.ok()) continue;
    std::map<const Implementation*, std::optional<ConfigSpace>> spaces;  // nullopt: not applicable there
    const std::vector<std::string>& top = near[n].top;
    for (size_t i = 0; i < candidates.size(); ++i) {
      if (std::find(top.begin(), top.end(), CandidateKey(candidates[i])) != top.end()) continue;
      const Implementation* impl = registry.FindImplementation(candidates[i].implementation);
      if (impl == nullptr) continue;
      auto [it, inserted] = spaces.try_emplace(impl);
      if (inserted && impl->Applicable(*there, target).ok()) it->second = impl->Space(*there, target);
      runs[n][i] = it->second.has_value() && it->second->Contains(candidates[i].config);
    }
  }
  return runs;
}

void BlendWithNeighbours(const std::vector<Selector::Neighbour>& near, const std::vector<Candidate>& candidates,
                         const std::vector<std::vector<char>>& runs, std::vector<double>* slowdowns) {
  for (size_t i = 0; i < candidates.size(); ++i) {
    if (std::isnan((*slowdowns)[i])) continue;
    const std::string key = CandidateKey(candidates[i]);
    double sum = 0, weights = 0;
    for (size_t n = 0; n < near.size(); ++n) {
      const Selector::Neighbour& nb = near[n];
      if (nb.top.empty() || nb.top.size() != nb.top_slowdown.size() || !runs[n][i]) continue;
      double slowdown = nb.top_slowdown.back();
      for (size_t j = 0; j < nb.top.size(); ++j) {
        if (nb.top[j] == key) slowdown = nb.top_slowdown[j];
      }
      const double w = 1.0 / (nb.distance + 0.1);
      sum += w * std::log(slowdown);
      weights += w;
    }
    if (weights > 0) (*slowdowns)[i] = std::exp(0.5 * std::log((*slowdowns)[i]) + 0.5 * sum / weights);
  }
}

}  // namespace opsched
