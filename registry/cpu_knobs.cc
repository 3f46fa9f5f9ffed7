#include "registry/cpu_knobs.h"

#include <algorithm>
#include <utility>

namespace opsched {

std::vector<int64_t> CpuThreadCounts(const Target& target) {
  std::vector<int64_t> threads;
  for (int64_t t = 1; t <= std::max(1, target.sm_count); t *= 2) threads.push_back(t);
  return threads;
}

Knobs<CpuKnobs> CpuThreadKnobs(const Target& target) {
  std::vector<int64_t> threads = CpuThreadCounts(target);
  CpuKnobs defaults;
  defaults.threads = static_cast<int>(threads.back());
  Knobs<CpuKnobs> knobs(defaults);
  knobs.Int("threads", &CpuKnobs::threads, std::move(threads));
  return knobs;
}

Knobs<CpuKnobs> CpuChunkKnobs(const Target& target, std::vector<int64_t> chunks, int64_t chunk) {
  std::vector<int64_t> threads = CpuThreadCounts(target);
  CpuKnobs defaults;
  defaults.threads = static_cast<int>(threads.back());
  defaults.chunk = chunk;
  Knobs<CpuKnobs> knobs(defaults);
  knobs.Int("threads", &CpuKnobs::threads, std::move(threads)).Int("chunk", &CpuKnobs::chunk, std::move(chunks));
  return knobs;
}

}  // namespace opsched
