// The neighbours' verdict on the floor (Dispatcher::Floor): where the rule and the
// vendor's heuristic pick differently, the nearest tuned workload of this target on which
// the rule runs the same implementation, and which measured both the rule's pick there
// and the vendor's candidate, says which of the two is faster. Measured times of a near
// shape, not a model's guess: on the H200 a model fitted on the H100 and H200 logs ranked
// cuDNN's implicit_precomp_gemm first on two held-out layers (a batch-1 ResNet-50 3x3 and
// a MobileNetV2 1x1 projection: 3.27x and 1.76x their best) where the nearest tuned layers
// had measured the rule's im2col GEMM 5.8x and 1.2-1.4x faster than it.
#include <algorithm>
#include <cmath>
#include <limits>
#include <string>

#include "core/format.h"
#include "strategies/dispatcher.h"

namespace opsched {

std::optional<Candidate> Dispatcher::RuleCandidate(const Workload& canonical,
                                                   const std::vector<const records::RecordEntry*>& there) const {
  if (!options_.offline) {
    // Live: what Heuristic serves there.
    StatusOr<Decision> d = Heuristic(canonical);
    if (!d.ok()) return std::nullopt;
    return Candidate{std::string(d->implementation->name()), d->config};
  }
  // Offline (a study, maybe on a host without the GPU whose libraries a vendor
  // implementation asks; its OfflineSpace is the hidden workload's, not this one's): the
  // first rule that holds whose implementation the workload's records show, as
  // OfflineHeuristic judges by the measured candidates.
  const Strategy* strategy = registry_.FindStrategy(canonical.op());
  if (strategy == nullptr) return std::nullopt;
  for (const StrategyRule& rule : strategy->rules()) {
    if (rule.holds && !rule.holds(canonical, target_)) continue;
    const Implementation* impl = registry_.FindImplementation(rule.implementation);
    if (impl == nullptr || impl->device_kind() != target_.kind) continue;
    if (options_.deterministic && !impl->traits().deterministic) continue;
    const auto measured = [&](const records::RecordEntry* e) {
      return db_->implementation(e->implementation) == rule.implementation;
    };
    if (std::none_of(there.begin(), there.end(), measured)) continue;
    StatusOr<Config> config = RuleConfig(rule, impl, canonical);
    if (!config.ok()) continue;
    return Candidate{rule.implementation, *std::move(config)};
  }
  return std::nullopt;
}

std::vector<records::Neighbour> Dispatcher::TunedNeighbours(const Workload& canonical) const {
  std::vector<records::Neighbour> out;
  if (db_ == nullptr || !options_.use_nearest_records) return out;
  const int k = options_.nearest_k + static_cast<int>(options_.hidden_workloads.size());
  for (records::Neighbour& n : db_->Nearest(canonical, target_, k)) {
    if (options_.hidden_workloads.count(n.workload->hash())) continue;
    if (n.distance > options_.nearest_max_distance || static_cast<int>(out.size()) == options_.nearest_k) break;
    out.push_back(std::move(n));
  }
  return out;
}

double Dispatcher::FastestMeasured(const std::vector<const records::RecordEntry*>& records,
                                   const Candidate* candidate) const {
  double fastest = std::numeric_limits<double>::infinity();
  for (const records::RecordEntry* e : records) {
    if (e->status != records::OK || !(e->call_us > 0)) continue;
    if (candidate != nullptr && (db_->implementation(e->implementation) != candidate->implementation ||
                                 db_->config(e->config) != candidate->config)) {
      continue;
    }
    fastest = std::min<double>(fastest, e->call_us);
  }
  return fastest;
}

std::optional<Dispatcher::FloorVerdict> Dispatcher::NeighboursVerdict(const Workload& canonical,
                                                                      std::string_view rule_implementation,
                                                                      const Candidate& vendor) const {
  for (const records::Neighbour& n : TunedNeighbours(canonical)) {
    const std::vector<const records::RecordEntry*> records = db_->ExactRecordsFor(n.workload->hash(), target_key_);
    const std::optional<Candidate> there = RuleCandidate(*n.workload, records);
    if (!there || there->implementation != rule_implementation) continue;
    const double rule_us = FastestMeasured(records, &*there), vendor_us = FastestMeasured(records, &vendor);
    if (std::isinf(rule_us) || std::isinf(vendor_us)) continue;
    return FloorVerdict{n.workload->ToString(), n.distance, *there, rule_us, vendor_us};
  }
  return std::nullopt;
}

}  // namespace opsched
