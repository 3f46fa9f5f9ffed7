// Scatter's strategy: which implementation and config to use without records. Rules are
// tried by priority; a rule whose implementation does not apply (scatter_cuda_slice
// needs whole slices to fit shared memory, the privatized ones a small out, ...) passes
// to the next; a default config that is illegal for the workload becomes the closest
// legal one.
//
//  priority  implementation                  when                                     config
//  50        scatter_cuda_sequential         updates <= 64, data <= 64K elements      threads=32 fused_copy=1
//  48        scatter_cuda_sequential         updates <= 64                            threads=32 fused_copy=0
//  45        scatter_cuda_privatized         none/min/max, updates >= 16 * out        its default: block=512 blocks_per_sm=2
//  44        scatter_cuda_privatized_atomic  add/mul, updates >= 16 * out             its default: block=512 blocks_per_sm=2
//  41        scatter_cuda_slice_atomic       add/mul, dense, more than 64 updates     SliceConfig (below)
//                                            along the axis
//  40        scatter_cuda_slice              dense                                    SliceConfig; in order (threads=0)
//                                                                                     with at most 64 updates along the axis
//  35        scatter_cuda_bucketed           updates >= 1M, targets spread over more  bucket_bits=6 block=1024 windows=1
//                                            than L2                                  copy_block=256 copy_vector=16
//  30        scatter_cuda_parallel           any GPU workload                         its default: block=256 items=4 copy_block=256
//                                                                                     copy_vector=16, pairs=1 where paired
//                                                                                     f16/bf16 atomics fit
//  10        scatter_cuda_sorted             any GPU workload (deterministic)         its default: block=256 copy_block=256 copy_vector=16
//  20        scatter_cpu_parallel            CPU, updates >= 64K                      its default: threads=all chunk=256
//  10        scatter_cpu_sequential          CPU                                      (no knobs)
//
// The slice kernels hold `columns` whole columns (slices along the axis) of data in shared
// memory, so they read and write every data value of a tile once, whether or not an
// update touches it: they pay off where the updates are dense, at least half as many
// along the axis as the axis is long. On the H100 training records they win every dense
// workload but one (GCN Cora, 1.19x the parallel kernel's time), and lose 2.4x to 3x on
// the sparse ones (a 30522-row embedding gradient with 4096 tokens, a 16-position
// KV-cache write). SliceConfig: widen the tile until its rows fill a 32-byte sector
// (columns inside one outer slice) or it holds 4 KiB (tiles of whole outer slices), while
// at least 64 tiles remain; threads: one per 32 updates of a tile, 256 to 1024; in order
// (one thread a column) where a column has at most 64 updates (the 7-long axis: 3.3x
// faster than shared atomics). On the 11 dense workloads where a slice kernel is the
// best, its best columns are 8, 32, 256 and 128 (in order), 1 (four of them), 2 (three)
// where this gives 8, 8, 256, 256, 1 and 2.
//
// Both slice kernels fit dense updates only: the model's pick of one for sparse updates is
// contested, and the rules decide.
//
// Records override all of this; the thresholds are starting points, not truths (TVM
// #7233). With deterministic dispatch the non-deterministic implementations are skipped.
#include <algorithm>
#include <variant>

#include "core/dtype.h"
#include "registry/registry.h"
#include "strategies/strategies_register.h"

namespace opsched {
namespace {

int64_t Updates(const Workload& w) { return w.FindTensor("updates")->numel(); }
int64_t Data(const Workload& w) { return w.FindTensor("data")->numel(); }
std::string_view Reduction(const Workload& w) { return std::get<std::string>(*w.FindAttr("reduction")); }
bool OrderFree(const Workload& w) { return Reduction(w) == "none" || Reduction(w) == "min" || Reduction(w) == "max"; }

// Data as [outer, d, inner] around the axis, indices and updates as [outer, i, inner].
struct Slices {
  int64_t outer = 1, d = 1, i = 1, inner = 1, elem_bytes = 4;
};

Slices SlicesOf(const Workload& w) {
  const TensorDesc& data = *w.FindTensor("data");
  const TensorDesc& indices = *w.FindTensor("indices");
  const int axis = static_cast<int>(std::get<int64_t>(*w.FindAttr("axis")));
  Slices s;
  s.d = data.dim(axis);
  s.i = indices.dim(axis);
  s.elem_bytes = static_cast<int64_t>(DTypeSize(data.dtype()));
  for (int k = 0; k < axis; ++k) s.outer *= data.dim(k);
  for (int k = axis + 1; k < data.rank(); ++k) s.inner *= data.dim(k);
  return s;
}

bool Dense(const Workload& w) {
  const Slices s = SlicesOf(w);
  return 2 * s.i >= s.d;
}

// Bytes of out that one position's target may land in: the axis's extent at its stride
// (all of out for axis 0). Bucketing pays off only where this window is larger than L2:
// on the H100 records (50 MiB L2) it wins on every scatter of at least 1M updates whose
// window is larger (1-D 2^24 f32 and i64, embedding gradients of 77-134 MB: 0.63-0.97x
// the best other time) and loses everywhere else (a 51 MB table 1.02-1.22x; last-axis
// scatters, a KV-cache write, tables within L2: 1.2-5.7x). So its rule asks for that, and
// a model's pick of it elsewhere is contested (the selector, trained on float scatters,
// took six integer scatters within L2 to it: 1.2-2.5x the parallel kernel).
int64_t SpreadBytes(const Workload& w) {
  const Slices s = SlicesOf(w);
  return s.d * s.inner * s.elem_bytes;
}
bool SpreadBeyondL2(const Workload& w, const Target& t) {
  constexpr int64_t kL2Guess = int64_t(32) << 20;  // a target that does not say
  return SpreadBytes(w) > (t.l2_bytes > 0 ? t.l2_bytes : kL2Guess);
}
constexpr const char* kSpread = "targets spread over more than L2";

constexpr const char* kDense = "dense: updates along the axis >= half the axis";

Config ConfigOf(std::initializer_list<std::pair<const char*, int64_t>> knobs) {
  Config c;
  for (const auto& [name, value] : knobs) c.Set(name, value);
  return c;
}

// The slice kernels' config (see the top of the file); `may_order`: the in-order variant
// (threads=0) exists.
Config SliceConfig(const Workload& w, bool may_order) {
  const Slices s = SlicesOf(w);
  auto wide = [&](int64_t c) { return c < s.inner ? c * s.elem_bytes >= 32 : c * s.d * s.elem_bytes >= 4096; };
  int64_t columns = 1;
  while (!wide(columns) && columns < 1024 && s.outer * s.inner / (2 * columns) >= 64) columns *= 2;
  if (may_order && s.i <= 64) return ConfigOf({{"columns", std::max<int64_t>(columns, 32)}, {"threads", 0}});
  int64_t threads = 256;
  while (threads < 1024 && threads * 32 < s.i * columns) threads *= 2;
  return ConfigOf({{"columns", columns}, {"threads", threads}});
}

std::unique_ptr<Strategy> MakeScatterStrategy() {
  auto gpu = [](auto&& condition) {
    return [condition](const Workload& w, const Target& t) { return OnGpu(t) && condition(w); };
  };
  auto fixed = [](Config c) { return [c](const Workload&, const Target&) { return c; }; };
  std::vector<StrategyRule> rules = {
      {50, "scatter_cuda_sequential", "updates <= 64 and data <= 64K elements",
       gpu([](const Workload& w) { return Updates(w) <= 64 && Data(w) <= 65536; }),
       fixed(ConfigOf({{"threads", 32}, {"fused_copy", 1}}))},
      {48, "scatter_cuda_sequential", "updates <= 64", gpu([](const Workload& w) { return Updates(w) <= 64; }),
       fixed(ConfigOf({{"threads", 32}, {"fused_copy", 0}}))},
      {45, "scatter_cuda_privatized", "none/min/max and updates >= 16 * out",
       gpu([](const Workload& w) { return OrderFree(w) && Updates(w) >= 16 * Data(w); }), nullptr},
      {44, "scatter_cuda_privatized_atomic", "add/mul and updates >= 16 * out",
       gpu([](const Workload& w) { return !OrderFree(w) && Updates(w) >= 16 * Data(w); }), nullptr},
      {41, "scatter_cuda_slice_atomic", "add/mul, dense, more than 64 updates along the axis",
       gpu([](const Workload& w) { return !OrderFree(w) && Dense(w) && SlicesOf(w).i > 64; }),
       [](const Workload& w, const Target&) { return SliceConfig(w, false); },
       kDense, [](const Workload& w, const Target&, const Config&) { return Dense(w); }},
      {40, "scatter_cuda_slice", kDense, gpu([](const Workload& w) { return Dense(w); }),
       [](const Workload& w, const Target&) { return SliceConfig(w, true); },
       kDense, [](const Workload& w, const Target&, const Config&) { return Dense(w); }},
      {35, "scatter_cuda_bucketed", "updates >= 1M, targets spread over more than L2",
       [](const Workload& w, const Target& t) { return OnGpu(t) && Updates(w) >= (1 << 20) && SpreadBeyondL2(w, t); },
       // Over every config of the seven tuned bucketed lines of the H100 records (72 each),
       // this one is within 1.016x of each line's best on geomean (1.05x at worst); the
       // knobs' defaults (4 bits, blocks of 256, no windows) 1.11x (1.29x).
       fixed(ConfigOf({{"bucket_bits", 6}, {"block", 1024}, {"copy_block", 256}, {"copy_vector", 16}, {"windows", 1}})),
       kSpread, [](const Workload& w, const Target& t, const Config&) { return SpreadBeyondL2(w, t); }},
      {30, "scatter_cuda_parallel", "any GPU workload", gpu([](const Workload&) { return true; }), nullptr},
      {10, "scatter_cuda_sorted", "any GPU workload (deterministic)", gpu([](const Workload&) { return true; }),
       nullptr},
      {20, "scatter_cpu_parallel", "CPU, updates >= 64K",
       [](const Workload& w, const Target& t) { return OnCpu(t) && Updates(w) >= 65536; }, nullptr},
      {10, "scatter_cpu_sequential", "CPU", [](const Workload&, const Target& t) { return OnCpu(t); }, nullptr},
  };
  return std::make_unique<Strategy>("scatter", std::move(rules));
}

}  // namespace

Status RegisterScatterStrategy(Registry& registry) {
  return registry.AddStrategy(MakeScatterStrategy());
}

}  // namespace opsched
