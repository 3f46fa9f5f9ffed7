// FeatureEncoder: numeric features of a candidate for the cost model — the workload's
// features (so records of other shapes can teach the model), a one-hot of the
// implementation, and each knob's value (word knobs by their rank among the words seen;
// NaN where an implementation lacks the knob).
#pragma once

#include <map>
#include <string>
#include <vector>

#include "core/workload.h"
#include "tuner/evaluator.h"

namespace opsched {

class FeatureEncoder {
 public:
  // Learns the implementations, knob names and word values from `candidates`, and the
  // workload feature length from `workload`.
  FeatureEncoder(const Workload& workload, const std::vector<Candidate>& candidates);

  std::vector<float> Encode(const Workload& workload, const Candidate& candidate) const;
  size_t width() const { return workload_width_ + implementations_.size() + knobs_.size(); }

 private:
  size_t workload_width_;
  std::map<std::string, size_t> implementations_;
  std::map<std::string, size_t> knobs_;
  std::map<std::string, std::map<std::string, size_t>> words_;  // knob -> word -> rank
};

}  // namespace opsched
