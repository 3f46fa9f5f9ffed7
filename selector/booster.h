// Booster: gradient-boosted trees (XGBoost, through its C API) predicting log time from
// candidate features. The tuner's guided search ranks unmeasured candidates with one;
// the selector (selector/selector.h) keeps one per op, saved in its model file.
#pragma once

#include <optional>
#include <vector>

#include "core/status.h"
#include "selector/forest.h"

namespace opsched {

class Booster {
 public:
  struct Params {
    int rounds = 60;
    int max_depth = 6;
    double eta = 0.3;
    int threads = 2;
    uint64_t seed = 0;
  };
  Booster() : Booster(Params{}) {}
  explicit Booster(Params params) : params_(params) {}
  ~Booster();
  Booster(const Booster&) = delete;
  Booster& operator=(const Booster&) = delete;

  // Trains a fresh model; rows of x have one length; NaN marks a missing feature.
  Status Fit(const std::vector<std::vector<float>>& x, const std::vector<float>& y);
  StatusOr<std::vector<float>> Predict(const std::vector<std::vector<float>>& x) const;
  // Predictions for `rows` row-major rows of columns() floats (NaN: missing), in place
  // (no copy of the data): the selector's hot path. A loaded model predicts through its
  // Forest (selector/forest.h), which gives XGBoost's values at a fraction of its cost.
  Status PredictDense(const float* x, size_t rows, float* out) const;
  bool trained() const { return booster_ != nullptr || forest_.has_value(); }
  size_t columns() const { return columns_; }

  // The model in XGBoost's own binary form (UBJSON), and back.
  StatusOr<std::string> Save() const;
  Status Load(std::string_view bytes, size_t columns);
  // A booster known by its trees alone (a model file without XGBoost's bytes, checked
  // against XGBoost when it was trained): it predicts (PredictDense) and nothing else.
  Status LoadForest(Forest forest, size_t columns);

  // The trees laid out as a Forest (through XGBoost's JSON model: about half a second for
  // 200 trees, so done when a model is trained and saved beside it).
  StatusOr<Forest> LayOut() const;
  // Predicts through `forest` from now on, once it predicts as XGBoost does, bit for bit,
  // on rows at the model's splits (else an error, and predictions stay XGBoost's). Needs
  // XGBoost's model (trained or loaded), as Predict, Save and LayOut do.
  Status UseForest(Forest forest);
  bool has_forest() const { return forest_.has_value(); }

 private:
  Params params_;
  void* booster_ = nullptr;
  size_t columns_ = 0;
  std::optional<Forest> forest_;

  Status PredictXgboost(const float* x, size_t rows, float* out) const;
  // Why a call that needs XGBoost's model cannot run: none trained, or trees alone.
  Status NoXgboostModel() const;
};

}  // namespace opsched
