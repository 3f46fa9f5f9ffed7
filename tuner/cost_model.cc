#include "tuner/cost_model.h"

#include <xgboost/c_api.h>

#include <cmath>

#include "core/format.h"

namespace opsched {
namespace {

Status XgbError(const char* what) {
  return absl::InternalError(fmt::format("xgboost {}: {}", what, XGBGetLastError()));
}

// A DMatrix over row-major x, freed with the guard.
struct Matrix {
  DMatrixHandle handle = nullptr;
  ~Matrix() {
    if (handle) XGDMatrixFree(handle);
  }
};

Status Build(const std::vector<std::vector<float>>& x, size_t columns, Matrix* m) {
  std::vector<float> flat;
  flat.reserve(x.size() * columns);
  for (const auto& row : x) {
    if (row.size() != columns) return absl::InvalidArgumentError("feature rows differ in length");
    flat.insert(flat.end(), row.begin(), row.end());
  }
  if (XGDMatrixCreateFromMat(flat.data(), x.size(), columns, std::nanf(""), &m->handle) != 0) {
    return XgbError("DMatrix");
  }
  return absl::OkStatus();
}

}  // namespace

CostModel::~CostModel() {
  if (booster_) XGBoosterFree(booster_);
}

Status CostModel::Fit(const std::vector<std::vector<float>>& x, const std::vector<float>& y) {
  if (x.empty() || x.size() != y.size()) return absl::InvalidArgumentError("no training rows");
  if (booster_) {
    XGBoosterFree(booster_);
    booster_ = nullptr;
  }
  columns_ = x.front().size();
  Matrix m;
  OPSCHED_RETURN_IF_ERROR(Build(x, columns_, &m));
  if (XGDMatrixSetFloatInfo(m.handle, "label", y.data(), y.size()) != 0) return XgbError("labels");
  BoosterHandle booster;
  if (XGBoosterCreate(&m.handle, 1, &booster) != 0) return XgbError("booster");
  booster_ = booster;
  const std::string depth = std::to_string(params_.max_depth);
  const std::string eta = std::to_string(params_.eta);
  const std::string threads = std::to_string(params_.threads);
  const std::string seed = std::to_string(params_.seed);
  const std::pair<const char*, const char*> settings[] = {
      {"objective", "reg:squarederror"}, {"max_depth", depth.c_str()}, {"eta", eta.c_str()},
      {"nthread", threads.c_str()},      {"seed", seed.c_str()},      {"verbosity", "0"},
      {"min_child_weight", "1"},
  };
  for (const auto& [key, value] : settings) {
    if (XGBoosterSetParam(booster_, key, value) != 0) return XgbError(key);
  }
  for (int i = 0; i < params_.rounds; ++i) {
    if (XGBoosterUpdateOneIter(booster_, i, m.handle) != 0) return XgbError("training");
  }
  return absl::OkStatus();
}

StatusOr<std::vector<float>> CostModel::Predict(const std::vector<std::vector<float>>& x) const {
  if (!booster_) return absl::FailedPreconditionError("the cost model is not trained");
  if (x.empty()) return std::vector<float>();
  Matrix m;
  OPSCHED_RETURN_IF_ERROR(Build(x, columns_, &m));
  bst_ulong length = 0;
  const float* out = nullptr;
  if (XGBoosterPredict(booster_, m.handle, 0, 0, 0, &length, &out) != 0) return XgbError("predict");
  return std::vector<float>(out, out + length);
}

}  // namespace opsched
