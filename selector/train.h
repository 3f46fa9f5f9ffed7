// Training the selector from records: every ok record of one target kind and arch
// becomes a row (workload features, target, implementation, config) -> log time of one
// booster per op. `opsched records train` writes the result as a model file.
#pragma once

#include <cstdint>
#include <set>
#include <string>
#include <vector>

#include "core/status.h"
#include "records/database.h"
#include "selector/booster.h"
#include "selector/selector_model.pb.h"
#include "registry/registry.h"

namespace opsched {

struct TrainOptions {
  std::string target_kind = "cuda";
  // Records of this Target::arch_key() only; empty: the arch with the most ok records of
  // the kind (models never mix arches).
  std::string arch;
  Booster::Params booster = {.rounds = 200, .max_depth = 8, .eta = 0.1, .threads = 2, .seed = 1};
  // Workloads (hashes) left out, as if never tuned (study --holdout).
  std::set<uint64_t> exclude;
  // Rows carry each candidate's main-kernel launch (CandidateEncoding::kLaunchColumns).
  bool launch_features = true;
  // Also keep XGBoost's own model of each booster in the file (about five times the bytes
  // of the trees laid out for prediction, which serve alone; `records train --keep-xgboost`).
  bool keep_xgboost = false;
};

// The model of the ok records in `dbs`; *summary (if given) gets a few lines saying what
// it was trained on and how well it fits. An error when no record qualifies.
StatusOr<selector::SelectorModelProto> TrainSelector(const Registry& registry,
                                                     const std::vector<const records::Database*>& dbs,
                                                     const TrainOptions& options, std::string* summary = nullptr);

}  // namespace opsched
