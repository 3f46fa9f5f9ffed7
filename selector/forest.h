// Forest: a trained booster's trees laid out for predicting a few dozen rows at a time,
// the selector's first decision. XGBoost's own predictor pays about 20 us a call (it
// parses its configuration and array interface and sets up a proxy matrix) and walks
// nodes of 40 bytes; here a call costs nothing fixed and a node is 12 bytes, the right
// child beside the left one. The trees come from XGBoost's JSON model when a model is
// trained, and are saved with it (ForestProto). The sums follow XGBoost's order (the base
// score, then each tree's leaf in turn, in float), so a prediction is XGBoost's to the
// bit: tests/selector/forest_test.cc checks it, and Booster::UseForest checks it on rows
// at the model's splits before it predicts through one.
#pragma once

#include <cstdint>
#include <string_view>
#include <vector>

#include "core/status.h"
#include "selector/forest.pb.h"

namespace opsched {

class Forest {
 public:
  // From XGBoost's JSON model (XGBoosterSaveModelToBuffer, format "json"). Errors when the
  // model is something this layout does not serve: categorical splits, several outputs
  // or trees per round, vector leaves, or an objective whose prediction is not the sum.
  static StatusOr<Forest> FromXgboostJson(std::string_view json);
  // Errors (DataLoss) when the arrays disagree in length, a split's children are not
  // after it and within the forest, or there is no tree.
  static StatusOr<Forest> FromProto(const selector::ForestProto& proto);
  selector::ForestProto ToProto() const;

  // out[r] for `rows` row-major rows of `columns` floats (NaN: missing). Features the
  // model splits on must lie within `columns` (checked: FailedPrecondition otherwise).
  Status Predict(const float* x, size_t rows, size_t columns, float* out) const;

  // Rows for checking this forest against the booster it came from: one with every
  // feature missing, then splits spread over the forest at their threshold, just below
  // it, and missing. At most max_rows (at least one) rows of `columns` floats.
  std::vector<float> ProbeRows(size_t columns, size_t max_rows) const;

  size_t trees() const { return roots_.size(); }
  size_t nodes() const { return nodes_.size(); }
  // One past the largest feature index the trees split on: rows need this many columns.
  size_t columns_needed() const { return max_feature_; }

 private:
  struct Node {
    float value;       // split threshold (go left when the feature is below it), or the leaf's value
    uint32_t feature;  // feature index, and the flags below
    int32_t left;      // index of the left child (the right one follows it); unused at a leaf
  };
  static constexpr uint32_t kDefaultLeft = 0x80000000u;  // a missing feature goes left
  static constexpr uint32_t kSplit = 0x40000000u;        // not a leaf
  static constexpr uint32_t kColumn = 0x3fffffffu;

  float base_score_ = 0;
  uint32_t max_feature_ = 0;  // one past the largest feature index split on
  std::vector<int32_t> roots_;
  std::vector<Node> nodes_;
};

}  // namespace opsched
