#include "strategies/decision.h"

#include "core/format.h"

namespace opsched {

std::string_view ProvenanceName(Provenance provenance) {
  switch (provenance) {
    case Provenance::kExactRecord:
      return "exact record";
    case Provenance::kTransferredRecord:
      return "transferred record";
    case Provenance::kNearestRecord:
      return "nearest-workload record";
    case Provenance::kHeuristic:
      return "heuristic";
    case Provenance::kPredicted:
      return "predicted";
    case Provenance::kVendor:
      return "vendor heuristic";
  }
  return "?";
}

std::string Explanation::ToString() const {
  std::string out = fmt::format("workload:       {}\ntarget:         {}\n", workload, target);
  out += fmt::format("implementation: {}\nconfig:         {}\nprovenance:     {}\nreason:         {}\n",
                     decision.implementation ? decision.implementation->name() : "(none)",
                     decision.config.ToString(), ProvenanceName(decision.provenance),
                     decision.reason);
  if (decision.workspace_bytes > 0) {
    out += fmt::format("workspace:      {} bytes\n", decision.workspace_bytes);
  }
  if (decision.predicted_us > 0) out += fmt::format("predicted:      {:.2f} us\n", decision.predicted_us);
  if (!model_notes.empty()) {
    out += "model:\n";
    for (const std::string& n : model_notes) out += fmt::format("  {}\n", n);
  }
  out += "considered:\n";
  for (const Considered& c : considered) {
    out += fmt::format("  [{}] {} {}: {}\n", c.source, c.implementation, c.config, c.verdict);
  }
  return out;
}

}  // namespace opsched
