// DispatchOptions: how a Dispatcher chooses (deterministic choices only, transferred
// and nearest records, the learned selector, a workspace limit, offline studies). A
// header of its own, with no records or dispatcher types, because it is part of the
// consumer's RuntimeOptions.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>
#include <set>
#include <vector>

#include "core/config.h"
#include "core/workload.h"

namespace opsched {

// An offline study's view of one workload (study --holdout on a host without the
// device): the candidates measured for it stand for its legal space (cuDNN cannot be
// asked which algorithms it supports without a device), and the rule's and the
// vendor's choices are the ones the tuner recorded as seeds. No times are taken from it.
struct OfflineSpace {
  std::vector<Candidate> candidates;
  std::optional<Candidate> rule;
  std::optional<Candidate> vendor;
};
using OfflineSpaces = std::function<const OfflineSpace*(const Workload& canonical)>;

struct DispatchOptions {
  bool deterministic = false;
  bool allow_transferred_records = false;
  bool use_nearest_records = true;
  int nearest_k = 4;
  // A tuned workload further than this (Database::Distance, in log2 units of the
  // dimensions) is no guide: its config is not carried over.
  double nearest_max_distance = 3.0;
  // The selector decides only for workloads within this distance of one it was trained
  // on (Selector::Nearest: RMS of the feature differences in units of their spread).
  bool use_model = true;
  double model_max_distance = 1.0;
  // No choice needs more workspace than this (records, prediction, rules and the
  // vendor's heuristic alike): a candidate over it is not usable.
  size_t max_workspace_bytes = SIZE_MAX;
  // Workloads (hashes) whose records are ignored, as if never tuned (study --holdout).
  std::set<uint64_t> hidden_workloads;
  // Set: decide offline over the spaces it gives (see OfflineSpace), never asking an
  // implementation whether it applies.
  OfflineSpaces offline;
};

}  // namespace opsched
