// The memory a Trial of a workload needs, checked before anything is allocated, so that a
// workload larger than the device gives a clear error instead of a failed allocation
// (or an exception) deep inside the run.
#pragma once

#include <cstdint>

#include "core/status.h"
#include "core/target.h"
#include "core/workload.h"
#include "registry/op_def.h"

namespace opsched {

struct MemoryNeed {
  int64_t device_bytes = 0;  // the workload's tensors on the target's device
  int64_t host_bytes = 0;    // a host copy of each, and the float64 reference of the outputs
};

// What a Trial of `canonical` allocates (the op's own reference may need more).
MemoryNeed TrialMemoryNeed(const OpDef& op, const Workload& canonical);
// ResourceExhausted, naming both figures, when the need exceeds the target's memory or
// the host's (on a CPU target, the two needs together against the host's memory).
Status CheckMemoryNeed(const OpDef& op, const Workload& canonical, const Target& target);

}  // namespace opsched
