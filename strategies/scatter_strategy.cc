// Scatter's strategy: which implementation and config to use without records. Rules are
// tried by priority; a rule whose implementation does not apply (scatter_cuda_slice
// needs whole slices to fit shared memory, the privatized ones a small out, ...) passes
// to the next; a default config that is illegal for the workload becomes the closest
// legal one.
//
//  priority  implementation                  when                                     default config
//  50        scatter_cuda_sequential         updates <= 64, data <= 64K elements      threads=32 fused_copy=1
//  48        scatter_cuda_sequential         updates <= 64                            threads=32 fused_copy=0
//  45        scatter_cuda_privatized         none/min/max, updates >= 16 * out        block=512 blocks_per_sm=2
//  44        scatter_cuda_privatized_atomic  add/mul, updates >= 16 * out             block=512 blocks_per_sm=2
//  41        scatter_cuda_slice_atomic       add/mul                                  columns=32 threads=256
//  40        scatter_cuda_slice              any                                      columns=32 threads=256 (none/min/max)
//                                                                                     columns=32 threads=0 (add/mul, in order)
//  35        scatter_cuda_bucketed           updates >= 1M                            bucket_bits=4 block=256
//  30        scatter_cuda_parallel           any GPU workload                         block=256 items=4 copy_block=256 copy_vector=16
//  10        scatter_cuda_sorted             any GPU workload (deterministic)         block=256 copy_block=256 copy_vector=16
//  20        scatter_cpu_parallel            CPU, updates >= 64K                      threads=all chunk=256
//  10        scatter_cpu_sequential          CPU                                      (no knobs)
//
// Records override all of this; the thresholds are starting points, not truths (TVM
// #7233). With deterministic dispatch the non-deterministic implementations are skipped.
#include "registry/registry.h"

namespace opsched {
namespace {

int64_t Updates(const Workload& w) { return w.FindTensor("updates")->numel(); }
int64_t Data(const Workload& w) { return w.FindTensor("data")->numel(); }
std::string_view Reduction(const Workload& w) { return std::get<std::string>(*w.FindAttr("reduction")); }
bool OrderFree(const Workload& w) { return Reduction(w) == "none" || Reduction(w) == "min" || Reduction(w) == "max"; }

Config Knobs(std::initializer_list<std::pair<const char*, int64_t>> knobs) {
  Config c;
  for (const auto& [name, value] : knobs) c.Set(name, value);
  return c;
}

std::unique_ptr<Strategy> MakeScatterStrategy() {
  auto gpu = [](auto&& condition) {
    return [condition](const Workload& w, const Target& t) { return OnGpu(t) && condition(w); };
  };
  auto fixed = [](Config c) { return [c](const Workload&, const Target&) { return c; }; };
  std::vector<StrategyRule> rules = {
      {50, "scatter_cuda_sequential", "updates <= 64 and data <= 64K elements",
       gpu([](const Workload& w) { return Updates(w) <= 64 && Data(w) <= 65536; }),
       fixed(Knobs({{"threads", 32}, {"fused_copy", 1}}))},
      {48, "scatter_cuda_sequential", "updates <= 64", gpu([](const Workload& w) { return Updates(w) <= 64; }),
       fixed(Knobs({{"threads", 32}, {"fused_copy", 0}}))},
      {45, "scatter_cuda_privatized", "none/min/max and updates >= 16 * out",
       gpu([](const Workload& w) { return OrderFree(w) && Updates(w) >= 16 * Data(w); }),
       fixed(Knobs({{"block", 512}, {"blocks_per_sm", 2}}))},
      {44, "scatter_cuda_privatized_atomic", "add/mul and updates >= 16 * out",
       gpu([](const Workload& w) { return !OrderFree(w) && Updates(w) >= 16 * Data(w); }),
       fixed(Knobs({{"block", 512}, {"blocks_per_sm", 2}}))},
      {41, "scatter_cuda_slice_atomic", "add/mul", gpu([](const Workload& w) { return !OrderFree(w); }),
       fixed(Knobs({{"columns", 32}, {"threads", 256}}))},
      {40, "scatter_cuda_slice", "any", gpu([](const Workload&) { return true; }),
       [](const Workload& w, const Target&) {
         return Knobs({{"columns", 32}, {"threads", OrderFree(w) ? 256 : 0}});
       }},
      {35, "scatter_cuda_bucketed", "updates >= 1M", gpu([](const Workload& w) { return Updates(w) >= (1 << 20); }),
       fixed(Knobs({{"bucket_bits", 4}, {"block", 256}, {"copy_block", 256}, {"copy_vector", 16}}))},
      {30, "scatter_cuda_parallel", "any GPU workload", gpu([](const Workload&) { return true; }),
       fixed(Knobs({{"block", 256}, {"items", 4}, {"copy_block", 256}, {"copy_vector", 16}}))},
      {10, "scatter_cuda_sorted", "any GPU workload (deterministic)", gpu([](const Workload&) { return true; }),
       fixed(Knobs({{"block", 256}, {"copy_block", 256}, {"copy_vector", 16}}))},
      {20, "scatter_cpu_parallel", "CPU, updates >= 64K",
       [](const Workload& w, const Target& t) { return OnCpu(t) && Updates(w) >= 65536; },
       [](const Workload&, const Target& t) {
         int64_t threads = 1;
         while (threads * 2 <= t.sm_count) threads *= 2;
         return Knobs({{"threads", threads}, {"chunk", 256}});
       }},
      {10, "scatter_cpu_sequential", "CPU", [](const Workload&, const Target& t) { return OnCpu(t); }, nullptr},
  };
  return std::make_unique<Strategy>("scatter", std::move(rules));
}

OPSCHED_REGISTER_STRATEGY(MakeScatterStrategy());

}  // namespace
}  // namespace opsched
