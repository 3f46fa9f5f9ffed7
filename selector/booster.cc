#include "selector/booster.h"

#include <xgboost/c_api.h>

#include <cmath>
#include <cstring>

#include "core/format.h"

namespace opsched {
namespace {

Status XgbError(const char* what) {
  // XGBoost's message carries a stack trace after its first line.
  std::string message = XGBGetLastError();
  message = message.substr(0, message.find('\n'));
  return absl::InternalError(fmt::format("xgboost {}: {}", what, message));
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

Status Booster::NoXgboostModel() const {
  return absl::FailedPreconditionError(forest_ ? "the booster has no XGBoost model (it was loaded from its trees alone)"
                                               : "the model is not trained");
}

Booster::~Booster() {
  if (booster_) XGBoosterFree(booster_);
}

Status Booster::Fit(const std::vector<std::vector<float>>& x, const std::vector<float>& y) {
  if (x.empty() || x.size() != y.size()) return absl::InvalidArgumentError("no training rows");
  forest_.reset();
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

StatusOr<std::vector<float>> Booster::Predict(const std::vector<std::vector<float>>& x) const {
  if (!booster_) return NoXgboostModel();
  if (x.empty()) return std::vector<float>();
  Matrix m;
  OPSCHED_RETURN_IF_ERROR(Build(x, columns_, &m));
  bst_ulong length = 0;
  const float* out = nullptr;
  if (XGBoosterPredict(booster_, m.handle, 0, 0, 0, &length, &out) != 0) return XgbError("predict");
  return std::vector<float>(out, out + length);
}

}  // namespace opsched

namespace opsched {

Status Booster::PredictDense(const float* x, size_t rows, float* out) const {
  if (!trained()) return absl::FailedPreconditionError("the model is not trained");
  if (rows == 0) return absl::OkStatus();
  if (forest_) return forest_->Predict(x, rows, columns_, out);
  return PredictXgboost(x, rows, out);
}

Status Booster::PredictXgboost(const float* x, size_t rows, float* out) const {
  // XGBoost's array interface over the caller's buffer: no DMatrix copy.
  const std::string array = fmt::format(
      R"({{"data": [{}, true], "shape": [{}, {}], "typestr": "<f4", "version": 3}})",
      reinterpret_cast<uintptr_t>(x), rows, columns_);
  const char* config = R"({"type": 0, "training": false, "iteration_begin": 0, "iteration_end": 0, "strict_shape": false, "missing": NaN, "cache_id": 0})";
  const bst_ulong* shape = nullptr;
  bst_ulong dims = 0;
  const float* result = nullptr;
  if (XGBoosterPredictFromDense(booster_, array.c_str(), config, nullptr, &shape, &dims, &result) != 0) {
    return XgbError("predict");
  }
  std::copy(result, result + rows, out);
  return absl::OkStatus();
}

StatusOr<std::string> Booster::Save() const {
  if (!booster_) return NoXgboostModel();
  bst_ulong length = 0;
  const char* bytes = nullptr;
  if (XGBoosterSaveModelToBuffer(booster_, R"({"format": "ubj"})", &length, &bytes) != 0) return XgbError("save");
  return std::string(bytes, length);
}

Status Booster::Load(std::string_view bytes, size_t columns) {
  forest_.reset();
  if (booster_) {
    XGBoosterFree(booster_);
    booster_ = nullptr;
  }
  BoosterHandle booster;
  if (XGBoosterCreate(nullptr, 0, &booster) != 0) return XgbError("booster");
  if (XGBoosterLoadModelFromBuffer(booster, bytes.data(), bytes.size()) != 0) {
    const Status error = XgbError("load");
    XGBoosterFree(booster);
    return error;
  }
  const std::string threads = std::to_string(params_.threads);
  XGBoosterSetParam(booster, "nthread", threads.c_str());
  booster_ = booster;
  columns_ = columns;
  return absl::OkStatus();
}

Status Booster::LoadForest(Forest forest, size_t columns) {
  if (forest.columns_needed() > columns) {
    return absl::DataLossError(fmt::format("the trees split on feature {}, the rows have {} columns",
                                           forest.columns_needed() - 1, columns));
  }
  if (booster_) {
    XGBoosterFree(booster_);
    booster_ = nullptr;
  }
  forest_ = std::move(forest);
  columns_ = columns;
  return absl::OkStatus();
}

StatusOr<Forest> Booster::LayOut() const {
  if (!booster_) return NoXgboostModel();
  bst_ulong length = 0;
  const char* json = nullptr;
  if (XGBoosterSaveModelToBuffer(booster_, R"({"format": "json"})", &length, &json) != 0) return XgbError("save");
  return Forest::FromXgboostJson(std::string_view(json, length));
}

Status Booster::UseForest(Forest forest) {
  if (!booster_) return NoXgboostModel();
  const std::vector<float> probe = forest.ProbeRows(columns_, 96);
  const size_t rows = columns_ == 0 ? 0 : probe.size() / columns_;
  std::vector<float> theirs(rows), ours(rows);
  OPSCHED_RETURN_IF_ERROR(PredictXgboost(probe.data(), rows, theirs.data()));
  OPSCHED_RETURN_IF_ERROR(forest.Predict(probe.data(), rows, columns_, ours.data()));
  for (size_t r = 0; r < rows; ++r) {
    if (std::memcmp(&theirs[r], &ours[r], sizeof(float)) != 0) {
      return absl::DataLossError(
          fmt::format("the forest predicts {} where XGBoost predicts {} (probe row {})", ours[r], theirs[r], r));
    }
  }
  forest_ = std::move(forest);
  return absl::OkStatus();
}

}  // namespace opsched
