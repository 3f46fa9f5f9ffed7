// The knobs of the CPU implementations: `threads` (OpenMP threads, powers of two up to
// the target's cores; by default all of them, as the CPU rules take) and, where work is
// handed out in pieces, `chunk` (elements, updates or terms per piece).
#pragma once

#include <cstdint>
#include <vector>

#include "core/target.h"
#include "registry/knobs.h"

namespace opsched {

struct CpuKnobs {
  int threads = 1;
  int64_t chunk = 1;
};

// Powers of two up to the target's cores (1 for a target that does not say).
std::vector<int64_t> CpuThreadCounts(const Target& target);
// `threads` alone.
Knobs<CpuKnobs> CpuThreadKnobs(const Target& target);
// `threads` and `chunk` over `chunks`, `chunk` by default.
Knobs<CpuKnobs> CpuChunkKnobs(const Target& target, std::vector<int64_t> chunks, int64_t chunk);

}  // namespace opsched
