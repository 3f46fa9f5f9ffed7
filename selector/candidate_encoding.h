// CandidateEncoding: one row of an op's model for a candidate — the workload's
// ModelFeatures (padded or cut to a fixed width), the target (SMs, L2), a one-hot of the
// implementation, each knob's value (an integer as it is, a word by its index; NaN
// where the implementation lacks the knob) and the grid its main kernel launches
// (Implementation::MainLaunch: blocks, threads, waves over the device, the last wave's
// share and the useful share of the work slots; NaN where the implementation does not
// say). Learned from the training records, kept in the model file, so a model encodes
// candidates the way it was trained.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/config.h"
#include "core/launch_shape.h"
#include "core/target.h"
#include "selector/selector_model.pb.h"

namespace opsched {

// "implementation config": one text key per candidate.
inline std::string CandidateKey(const Candidate& c) { return c.implementation + " " + c.config.ToString(); }

class CandidateEncoding {
 public:
  static constexpr size_t kTargetColumns = 2;
  static constexpr size_t kLaunchColumns = 5;

  CandidateEncoding() = default;
  CandidateEncoding(size_t workload_width, bool launch_features)
      : workload_width_(workload_width), launch_features_(launch_features) {}
  static CandidateEncoding FromProto(const selector::OpModel& model);
  void ToProto(selector::OpModel* model) const;

  // Training: adds the implementation, knobs and word values of `candidate`.
  void Learn(const Candidate& candidate);

  size_t workload_width() const { return workload_width_; }
  bool launch_features() const { return launch_features_; }
  size_t columns() const {
    return workload_width_ + kTargetColumns + implementations_.size() + knobs_.size() +
           (launch_features_ ? kLaunchColumns : 0);
  }
  bool Knows(std::string_view implementation) const { return implementations_.count(std::string(implementation)) > 0; }

  // Writes columns() floats to `row`; false (row untouched) when the implementation is
  // one the model never saw. An unknown knob or word is left NaN (missing), and so are
  // the launch columns without a `launch`.
  bool Encode(const std::vector<double>& workload_features, int sm_count, int64_t l2_bytes,
              const Candidate& candidate, const std::optional<LaunchShape>& launch, float* row) const;

 private:
  size_t workload_width_ = 0;
  bool launch_features_ = false;
  std::map<std::string, size_t, std::less<>> implementations_;
  std::map<std::string, size_t, std::less<>> knobs_;
  std::map<std::string, std::map<std::string, size_t, std::less<>>, std::less<>> words_;
};

}  // namespace opsched
