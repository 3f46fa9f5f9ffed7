// LaunchShape: the grid of an implementation's main kernel for one workload and config
// (Implementation::MainLaunch), as far as the selector's model needs it to compare configs
// across shapes. A knob's value alone does not say that: rows=32 is two tiles of a 56-row
// output plane, 12% of them idle, but several whole planes of a 14-row one; split=128
// over 2 blocks of outputs is a quarter of the blocks that split=128 over 12 gives.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>

namespace opsched {

struct LaunchShape {
  int64_t blocks = 0;       // thread blocks of the main kernel
  int threads = 0;          // threads per block
  size_t shared_bytes = 0;  // shared memory per block
  // The fraction of the grid's work slots (output tiles, lanes) that hold work: below 1
  // where tiles overhang the output or threads have nothing to load.
  double useful = 1.0;
};

// Resident blocks per multiprocessor when threads and shared memory are the only limits
// (registers unknown): the limits of sm_80 to sm_90-class GPUs (2,048 threads, 32 blocks
// and 228 KiB of shared memory a multiprocessor). A feature, not an occupancy calculator:
// the model is per arch, so the constants only need to be the same for all its records.
inline int ResidentBlocksPerSm(const LaunchShape& s) {
  constexpr int kThreadsPerSm = 2048, kBlocksPerSm = 32;
  constexpr size_t kSharedPerSm = 228 * 1024;
  int resident = std::min(kBlocksPerSm, kThreadsPerSm / std::max(s.threads, 1));
  if (s.shared_bytes > 0) resident = std::min<int>(resident, static_cast<int>(kSharedPerSm / s.shared_bytes));
  return std::max(resident, 1);
}

// How many times the grid fills every multiprocessor's resident blocks.
inline double Waves(const LaunchShape& s, int sm_count) {
  return static_cast<double>(s.blocks) / (static_cast<double>(std::max(sm_count, 1)) * ResidentBlocksPerSm(s));
}

// The share of the device's block slots busy over the grid's waves: waves / ceil(waves)
// (1 for whole waves; a grid of a third of a wave leaves two thirds idle).
inline double WaveEfficiency(const LaunchShape& s, int sm_count) {
  const double w = Waves(s, sm_count);
  return w > 0 ? w / std::ceil(w) : 0.0;
}

}  // namespace opsched
