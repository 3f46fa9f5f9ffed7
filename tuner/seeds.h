// Seeds: the candidates a tuning session measures first for a workload — what the
// Runtime would serve today (exact, transferred, nearest or predicted record, or the
// floor), then the strategy rule's choice, the vendor's own pick and the model's best
// guess where they differ —
// so that a record written by even a one-trial session is never worse than what was
// served before it.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "core/workload.h"
#include "strategies/dispatcher.h"
#include "tuner/evaluator.h"

namespace opsched {

struct Seed {
  Candidate candidate;
  // The search policy name its record carries: "heuristic" (the rules), "served"
  // (a record or the model decided), "vendor" (cuDNN's heuristic), "transferred" (what
  // the records and model of another device of the arch would serve), "predicted" (the
  // model's best guess where the Runtime does not trust it).
  std::string source;
};

// Distinct seeds for `canonical`, in the order to measure them. `served` holds the
// records (and model) a Runtime would load. `other_devices`, when given, is a dispatcher
// over the same records that also takes those of other devices of the target's arch
// (allow_transferred_records) and the model trained there: its choice (a transferred
// record, or the model's prediction) is measured next, with source "transferred", and
// where `served` has no model, that model's best guess ("predicted"). A new GPU of a
// known arch then starts from what the other device's tuning found, measured here.
std::vector<Seed> SeedCandidates(const Dispatcher& served, const Workload& canonical,
                                 const Dispatcher* other_devices = nullptr);

// SeedCandidates' `other_devices` for `target`: a dispatcher over `db` that allows
// transferred records, with `model` where it serves `target` at least by transfer; null
// where it could decide nothing a dispatcher of `target` alone does not (`db` holds no
// record of another device of the arch and the model, if any, serves `target` itself).
std::unique_ptr<Dispatcher> OtherDevicesDispatcher(const Registry& registry, const Target& target,
                                                   const records::Database* db, const Selector* model);

}  // namespace opsched
