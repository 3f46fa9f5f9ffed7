#include "tuner/search_policy.h"

#include <algorithm>
#include <map>
#include <cmath>
#include <numeric>

#include "core/format.h"

namespace opsched {
namespace {

// Proposes candidates in a fixed order.
class OrderedPolicy : public SearchPolicy {
 public:
  OrderedPolicy(std::string name, std::vector<size_t> order)
      : name_(std::move(name)), order_(std::move(order)) {}
  std::string_view name() const override { return name_; }
  std::vector<size_t> Next(size_t batch) override {
    std::vector<size_t> out;
    while (out.size() < batch && next_ < order_.size()) out.push_back(order_[next_++]);
    return out;
  }
  void Observe(size_t, double) override {}

 private:
  std::string name_;
  std::vector<size_t> order_;
  size_t next_ = 0;
};

class GuidedPolicy : public SearchPolicy {
 public:
  GuidedPolicy(const Workload& workload, const std::vector<Candidate>& candidates,
               const PolicyOptions& options)
      : encoder_(workload, candidates),
        options_(options),
        rng_(options.seed),
        proposed_(candidates.size(), false),
        model_(Booster::Params{.seed = options.seed}) {
    for (const Candidate& c : candidates) features_.push_back(encoder_.Encode(workload, c));
    for (size_t i = 0; i < candidates.size(); ++i) implementation_of_.push_back(candidates[i].implementation);
    for (const TransferExample& t : options.transfer) {
      if (t.time_us > 0) {
        transfer_x_.push_back(encoder_.Encode(t.workload, t.candidate));
        transfer_y_.push_back(static_cast<float>(std::log(t.time_us)));
      }
    }
  }
  std::string_view name() const override { return "xgb"; }

  std::vector<size_t> Next(size_t batch) override {
    std::vector<size_t> open;
    for (size_t i = 0; i < proposed_.size(); ++i) {
      if (!proposed_[i]) open.push_back(i);
    }
    std::vector<size_t> out;
    if (open.empty()) return out;
    std::shuffle(open.begin(), open.end(), rng_);
    const bool cold = observed_.size() < options_.initial && transfer_x_.empty();
    std::vector<float> predicted;
    if (!cold && Train()) {
      std::vector<std::vector<float>> x;
      for (size_t i : open) x.push_back(features_[i]);
      StatusOr<std::vector<float>> p = model_.Predict(x);
      if (p.ok()) predicted = *std::move(p);
    }
    if (predicted.empty()) {
      // No model yet: random candidates, taking the implementations in turn so that the
      // first model sees every kernel family, not mostly the one with the largest space.
      std::map<std::string, std::vector<size_t>> by_implementation;
      for (size_t i : open) by_implementation[implementation_of_[i]].push_back(i);
      std::vector<std::string> turn;
      for (const auto& [name, list] : by_implementation) turn.push_back(name);
      std::shuffle(turn.begin(), turn.end(), rng_);
      for (size_t round = 0; out.size() < std::min(batch, open.size()); ++round) {
        for (const std::string& name : turn) {
          const std::vector<size_t>& list = by_implementation[name];
          if (round < list.size() && out.size() < batch) out.push_back(list[round]);
        }
      }
    } else {
      // Best predicted first, and a share of random picks to keep exploring.
      std::vector<size_t> order(open.size());
      std::iota(order.begin(), order.end(), 0);
      std::stable_sort(order.begin(), order.end(),
                       [&](size_t a, size_t b) { return predicted[a] < predicted[b]; });
      const size_t explore = static_cast<size_t>(std::round(options_.exploration * batch));
      for (size_t k = 0; k < order.size() && out.size() + explore < batch; ++k) {
        out.push_back(open[order[k]]);
      }
      for (size_t i : open) {  // open is shuffled: its first unpicked are random picks
        if (out.size() >= batch) break;
        if (std::find(out.begin(), out.end(), i) == out.end()) out.push_back(i);
      }
    }
    for (size_t i : out) proposed_[i] = true;
    return out;
  }

  void Observe(size_t i, double time_us) override {
    proposed_[i] = true;
    observed_.emplace_back(i, time_us);
  }

 private:
  bool Train() {
    std::vector<std::vector<float>> x = transfer_x_;
    std::vector<float> y = transfer_y_;
    double worst = 0;
    for (const auto& [i, t] : observed_) worst = std::max(worst, t);
    for (const auto& [i, t] : observed_) {
      x.push_back(features_[i]);
      // Failures teach the model to stay away: ten times the slowest success.
      y.push_back(static_cast<float>(std::log(t > 0 ? t : std::max(worst, 1.0) * 10)));
    }
    if (x.size() < 2) return false;
    return model_.Fit(x, y).ok();
  }

  FeatureEncoder encoder_;
  PolicyOptions options_;
  std::mt19937_64 rng_;
  std::vector<std::vector<float>> features_;
  std::vector<std::string> implementation_of_;
  std::vector<bool> proposed_;
  std::vector<std::pair<size_t, double>> observed_;
  std::vector<std::vector<float>> transfer_x_;
  std::vector<float> transfer_y_;
  Booster model_;
};

}  // namespace

StatusOr<std::unique_ptr<SearchPolicy>> MakeSearchPolicy(std::string_view name,
                                                         const Workload& workload,
                                                         const std::vector<Candidate>& candidates,
                                                         const PolicyOptions& options) {
  std::vector<size_t> order(candidates.size());
  std::iota(order.begin(), order.end(), 0);
  if (name == "grid") return std::make_unique<OrderedPolicy>("grid", std::move(order));
  if (name == "random") {
    std::mt19937_64 rng(options.seed);
    std::shuffle(order.begin(), order.end(), rng);
    return std::make_unique<OrderedPolicy>("random", std::move(order));
  }
  if (name == "xgb") return std::make_unique<GuidedPolicy>(workload, candidates, options);
  return absl::InvalidArgumentError(
      fmt::format("unknown search policy '{}' (expected grid, random or xgb)", name));
}

}  // namespace opsched
