// Reduce's strategy: without records, the kernel follows the layout of the canonical
// problem (ops/reduce/reduce_params.h) and the config is sized to fill the device.
//
//  priority  implementation        when                                        default config
//  45        reduce_cuda_staged    several contiguous runs per output and      columns block 32 x 8, vector 4 where it fits,
//                                  outputs * run >= 4096 (bias gradients)      split to fill the SMs; rows group by run length
//  40        reduce_cuda_rows      innermost reduced dimension contiguous      group by row length (4 ... 512),
//                                                                              vector as wide as fits, split to fill the SMs
//  30        reduce_cuda_columns   any GPU workload                            block 32 x 8, vector 4 where it fits,
//                                                                              split to fill the SMs
//  20        reduce_cpu_parallel   CPU, x >= 64K elements                      its default: threads=all chunk=16384
//  10        reduce_cpu_sequential CPU                                         (no knobs)
//
// CUB and cuDNN are left to the tuner: records pick them where they win.
#include <algorithm>

#include "ops/reduce/reduce_def.h"
#include "registry/registry.h"
#include "strategies/strategies_register.h"

namespace opsched {
namespace {

using reduce::MakeProblem;
using reduce::Problem;

int64_t Pow2AtLeast(int64_t x) {
  int64_t p = 1;
  while (p < x) p *= 2;
  return p;
}

// The widest vector (<= 16 bytes) dividing the row and every stride.
int64_t WidestVector(const Problem& p, bool rows) {
  for (int64_t v = 16 / reduce::ElementBytes(p.in_type); v > 1; v /= 2) {
    bool fits = rows ? p.rows && p.row % v == 0 : p.columns && p.kept_shape[p.kept_rank - 1] % v == 0;
    for (int d = 0; d < p.reduced_rank; ++d) {
      if (p.reduced_strides[d] % v != 0 && !(rows && d == p.reduced_rank - 1)) fits = false;
    }
    for (int d = 0; d < p.kept_rank; ++d) {
      if (p.kept_strides[d] % v != 0 && !(!rows && d == p.kept_rank - 1)) fits = false;
    }
    if (fits) return v;
  }
  return 1;
}

Config RowsDefault(const Workload& w, const Target& t) {
  const Problem p = MakeProblem(w);
  const int64_t vector = WidestVector(p, true);
  const int64_t chunks = std::max<int64_t>(p.length / vector, 1);
  const int64_t group = chunks <= 16 ? 4 : chunks <= 64 ? 8 : chunks <= 256 ? 32 : chunks <= 4096 ? 128 : 512;
  // Enough groups to fill every SM (2048 threads each), each part at least 8 loads per thread.
  const int64_t wanted = std::max<int64_t>(1, int64_t(std::max(t.sm_count, 1)) * 2048 / group / std::max<int64_t>(p.outputs, 1));
  const int64_t most = std::max<int64_t>(1, chunks / (group * 8));
  const int64_t split = std::min<int64_t>({Pow2AtLeast(wanted), Pow2AtLeast(most + 1) / 2, 2048});
  Config c;
  c.Set("group", group);
  c.Set("block", 256);
  c.Set("vector", vector);
  c.Set("split", std::max<int64_t>(split, 1));
  return c;
}

Config ColumnsDefault(const Workload& w, const Target& t) {
  const Problem p = MakeProblem(w);
  const int64_t vector = std::min<int64_t>(WidestVector(p, false), 4);
  const int64_t blocks = std::max<int64_t>(1, p.outputs / vector / 32);
  const int64_t wanted = std::max<int64_t>(1, int64_t(std::max(t.sm_count, 1)) * 4 / blocks);
  const int64_t most = std::max<int64_t>(1, p.length / (8 * 8));
  const int64_t split = std::min<int64_t>({Pow2AtLeast(wanted), Pow2AtLeast(most + 1) / 2, 1024});
  Config c;
  c.Set("block_x", 32);
  c.Set("block_y", 8);
  c.Set("vector", vector);
  c.Set("split", std::max<int64_t>(split, 1));
  return c;
}

bool Staged(const Problem& p) { return p.rows && p.reduced_rank >= 2 && p.outputs * p.row >= 4096; }

Config StagedDefault(const Workload& w, const Target& t) {
  const Problem p = MakeProblem(w);
  // Vector loads of the first stage run along (outputs x run), contiguous in x; where
  // they do not fit, the closest legal config is used.
  const int64_t vector = 4;
  const int64_t blocks = std::max<int64_t>(1, p.outputs * p.row / vector / 32);
  const int64_t runs = p.length / std::max<int64_t>(p.row, 1);
  const int64_t wanted = std::max<int64_t>(1, int64_t(std::max(t.sm_count, 1)) * 4 / blocks);
  const int64_t most = std::max<int64_t>(1, runs / (8 * 8));
  const int64_t split = std::min<int64_t>({Pow2AtLeast(wanted), Pow2AtLeast(most + 1) / 2, 64});
  const int64_t chunks = p.row;
  Config c;
  c.Set("block_x", 32);
  c.Set("block_y", 8);
  c.Set("vector", vector);
  c.Set("split", std::max<int64_t>(split, 1));
  c.Set("group", chunks <= 16 ? 4 : chunks <= 64 ? 8 : 32);
  return c;
}

std::unique_ptr<Strategy> MakeReduceStrategy() {
  std::vector<StrategyRule> rules = {
      {45, "reduce_cuda_staged", "several contiguous runs per output, outputs * run >= 4096",
       [](const Workload& w, const Target& t) { return OnGpu(t) && Staged(MakeProblem(w)); }, StagedDefault},
      {40, "reduce_cuda_rows", "innermost reduced dimension contiguous",
       [](const Workload& w, const Target& t) { return OnGpu(t) && MakeProblem(w).rows; }, RowsDefault},
      {30, "reduce_cuda_columns", "any GPU workload", [](const Workload&, const Target& t) { return OnGpu(t); },
       ColumnsDefault},
      {20, "reduce_cpu_parallel", "CPU, x >= 64K elements",
       [](const Workload& w, const Target& t) { return OnCpu(t) && w.FindTensor("x")->numel() >= 65536; },
       nullptr},
      {10, "reduce_cpu_sequential", "CPU", [](const Workload&, const Target& t) { return OnCpu(t); }, nullptr},
  };
  return std::make_unique<Strategy>("reduce", std::move(rules));
}

}  // namespace

Status RegisterReduceStrategy(Registry& registry) {
  return registry.AddStrategy(MakeReduceStrategy());
}

}  // namespace opsched
