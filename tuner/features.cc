#include "tuner/features.h"

#include <cmath>

namespace opsched {

FeatureEncoder::FeatureEncoder(const Workload& workload, const std::vector<Candidate>& candidates)
    : workload_width_(workload.Features().size()) {
  for (const Candidate& c : candidates) {
    implementations_.emplace(c.implementation, implementations_.size());
    for (const Knob& k : c.config.knobs()) {
      knobs_.emplace(k.name, knobs_.size());
      if (const auto* s = std::get_if<std::string>(&k.value)) words_[k.name].emplace(*s, 0);
    }
  }
  for (auto& [knob, words] : words_) {
    size_t rank = 0;
    for (auto& [word, r] : words) r = rank++;
  }
}

std::vector<float> FeatureEncoder::Encode(const Workload& workload, const Candidate& c) const {
  std::vector<float> f(width(), std::nanf(""));
  const std::vector<double> wf = workload.Features();
  for (size_t i = 0; i < workload_width_; ++i) f[i] = i < wf.size() ? static_cast<float>(wf[i]) : 0.0f;
  size_t at = workload_width_;
  for (const auto& [name, index] : implementations_) {
    f[at + index] = name == c.implementation ? 1.0f : 0.0f;
  }
  at += implementations_.size();
  for (const Knob& k : c.config.knobs()) {
    auto knob = knobs_.find(k.name);
    if (knob == knobs_.end()) continue;
    if (const auto* i = std::get_if<int64_t>(&k.value)) {
      f[at + knob->second] = static_cast<float>(*i);
    } else {
      auto words = words_.find(k.name);
      if (words == words_.end()) continue;
      auto word = words->second.find(std::get<std::string>(k.value));
      if (word != words->second.end()) f[at + knob->second] = static_cast<float>(word->second);
    }
  }
  return f;
}

}  // namespace opsched
