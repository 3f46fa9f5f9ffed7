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
  out += "considered:\n";
  for (const Considered& c : considered) {
    out += fmt::format("  [{}] {} {}: {}\n", c.source, c.implementation, c.config, c.verdict);
  }
  return out;
}

}  // namespace opsched
