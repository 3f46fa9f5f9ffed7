#include "selector/candidate_encoding.h"

#include <cmath>

namespace opsched {

CandidateEncoding CandidateEncoding::FromProto(const selector::OpModel& m) {
  CandidateEncoding e(static_cast<size_t>(m.workload_width()), m.launch_features());
  for (const std::string& name : m.implementations()) e.implementations_.emplace(name, e.implementations_.size());
  for (const std::string& knob : m.knobs()) e.knobs_.emplace(knob, e.knobs_.size());
  for (const selector::KnobWords& w : m.words()) {
    auto& words = e.words_[w.knob()];
    for (const std::string& word : w.words()) words.emplace(word, words.size());
  }
  return e;
}

void CandidateEncoding::ToProto(selector::OpModel* m) const {
  m->set_workload_width(static_cast<int32_t>(workload_width_));
  std::vector<std::string> impls(implementations_.size()), knobs(knobs_.size());
  for (const auto& [name, i] : implementations_) impls[i] = name;
  for (const auto& [name, i] : knobs_) knobs[i] = name;
  for (const std::string& name : impls) m->add_implementations(name);
  for (const std::string& name : knobs) m->add_knobs(name);
  for (const auto& [knob, words] : words_) {
    selector::KnobWords* kw = m->add_words();
    kw->set_knob(knob);
    std::vector<std::string> ordered(words.size());
    for (const auto& [word, i] : words) ordered[i] = word;
    for (const std::string& word : ordered) kw->add_words(word);
  }
  m->set_launch_features(launch_features_);
  m->set_columns(static_cast<int32_t>(columns()));
}

void CandidateEncoding::Learn(const Candidate& c) {
  implementations_.emplace(c.implementation, implementations_.size());
  for (const Knob& k : c.config.knobs()) {
    knobs_.emplace(k.name, knobs_.size());
    if (const auto* s = std::get_if<std::string>(&k.value)) {
      auto& words = words_[k.name];
      words.emplace(*s, words.size());
    }
  }
}

bool CandidateEncoding::Encode(const std::vector<double>& wf, int sm_count, int64_t l2_bytes, const Candidate& c,
                               const std::optional<LaunchShape>& launch, float* row) const {
  auto impl = implementations_.find(c.implementation);
  if (impl == implementations_.end()) return false;
  const size_t n = columns();
  for (size_t i = 0; i < n; ++i) row[i] = std::nanf("");
  for (size_t i = 0; i < workload_width_; ++i) row[i] = i < wf.size() ? static_cast<float>(wf[i]) : 0.0f;
  size_t at = workload_width_;
  row[at++] = static_cast<float>(std::log2(1.0 + sm_count));
  row[at++] = static_cast<float>(std::log2(1.0 + static_cast<double>(l2_bytes)));
  for (size_t i = 0; i < implementations_.size(); ++i) row[at + i] = 0.0f;
  row[at + impl->second] = 1.0f;
  at += implementations_.size();
  for (const Knob& k : c.config.knobs()) {
    auto knob = knobs_.find(k.name);
    if (knob == knobs_.end()) continue;
    if (const auto* i = std::get_if<int64_t>(&k.value)) {
      row[at + knob->second] = static_cast<float>(*i);
    } else if (auto words = words_.find(k.name); words != words_.end()) {
      auto word = words->second.find(std::get<std::string>(k.value));
      if (word != words->second.end()) row[at + knob->second] = static_cast<float>(word->second);
    }
  }
  at += knobs_.size();
  if (launch_features_ && launch.has_value() && launch->blocks > 0) {
    const LaunchShape& s = *launch;
    row[at] = static_cast<float>(std::log2(1.0 + static_cast<double>(s.blocks)));
    row[at + 1] = static_cast<float>(std::log2(1.0 + static_cast<double>(s.blocks) * s.threads));
    row[at + 2] = static_cast<float>(Waves(s, sm_count));
    row[at + 3] = static_cast<float>(WaveEfficiency(s, sm_count));
    row[at + 4] = static_cast<float>(s.useful);
  }
  return true;
}

}  // namespace opsched
