// The selector's quality gate, without a GPU (opsched study --holdout): each tuned
// workload is hidden in turn — its records ignored, and, without a given model, a
// model trained on the other folds' records — and the dispatcher decides it from the
// rest, offline (strategies/dispatcher.h's OfflineSpace: the candidates measured for it
// stand for its space, its recorded rule and vendor seeds for those choices). The
// decision is then looked up among the workload's own records: served/best is its time
// over the workload's best; a decision never measured for it is "unknown".
#pragma once

#include <string>
#include <vector>

#include "core/status.h"
#include "core/table.h"
#include "records/database.h"
#include "strategies/dispatcher.h"
#include "registry/registry.h"

namespace opsched {

struct HoldoutOptions {
  std::string model_file;    // empty: one model per fold, trained without that fold
  int folds = 10;            // workloads hidden together when training per fold
  DispatchOptions dispatch;  // as the Runtime would decide
  std::string explain;       // keep the explanation of workloads whose line contains this
};

struct HoldoutEntry {
  std::string workload;
  std::string device;
  std::string provenance;
  std::string served;       // implementation and config
  double best_us = 0;
  double served_us = 0;     // 0: never measured for this workload (unknown)
  int records = 0;
  bool model_saw_it = false;  // a given model was trained with this workload
  std::string explanation;    // the dispatcher's, where HoldoutOptions::explain matched
};

struct HoldoutReport {
  std::vector<HoldoutEntry> entries;
  int unknown = 0;
  double geomean = 0;  // of served/best over the known entries
  double worst = 0;
  int model_saw = 0;   // entries a given model had seen (its figures flatter it)
  // The table, at most `width` columns wide (core/table.h; 0: every column in full), then
  // exactly: "holdout: N workloads, geomean served/best X, worst Y, unknown Z".
  std::string ToString(size_t width = kTableWidth) const;
};

StatusOr<HoldoutReport> RunHoldout(const Registry& registry, const records::Database& db, const HoldoutOptions& options);

}  // namespace opsched
