// CostModel: gradient-boosted trees (XGBoost, through its C API) predicting log time
// from candidate features. The guided search ranks unmeasured candidates with it.
#pragma once

#include <vector>

#include "core/status.h"

namespace opsched {

class CostModel {
 public:
  struct Params {
    int rounds = 60;
    int max_depth = 6;
    double eta = 0.3;
    int threads = 2;
    uint64_t seed = 0;
  };
  CostModel() : CostModel(Params{}) {}
  explicit CostModel(Params params) : params_(params) {}
  ~CostModel();
  CostModel(const CostModel&) = delete;
  CostModel& operator=(const CostModel&) = delete;

  // Trains a fresh model; rows of x have one length; NaN marks a missing feature.
  Status Fit(const std::vector<std::vector<float>>& x, const std::vector<float>& y);
  StatusOr<std::vector<float>> Predict(const std::vector<std::vector<float>>& x) const;
  bool trained() const { return booster_ != nullptr; }

 private:
  Params params_;
  void* booster_ = nullptr;
  size_t columns_ = 0;
};

}  // namespace opsched
