// Scatter's strategy: which implementation and config to use without records.
//
//  priority  implementation            when                                   default config
//  40        scatter_cuda_sequential   updates <= 64 and data <= 64K elements threads=32 fused_copy=1
//  38        scatter_cuda_sequential   updates <= 64                          threads=32 fused_copy=0
//  35        scatter_cuda_privatized   reduction != none, out <= 24K elements block=512 blocks_per_sm=2
//                                      and updates >= 16 * out (duplicate-heavy)
//  30        scatter_cuda_parallel     any GPU workload                       block=256 items=4
//                                                                             copy_block=256 copy_vector=16
//  10        scatter_cuda_sorted       any GPU workload (deterministic)       block=256 copy_block=256
//                                                                             copy_vector=16
//  20        scatter_cpu_parallel      CPU, updates >= 64K                    threads=all chunk=256
//  10        scatter_cpu_sequential    CPU                                    (no knobs)
//
// Records override all of this; the thresholds are starting points, not truths (TVM
// #7233). With deterministic dispatch, parallel and privatized are skipped.
#include "strategies/registry.h"

namespace opsched {
namespace {

int64_t Updates(const Workload& w) { return w.FindTensor("updates")->numel(); }
int64_t Data(const Workload& w) { return w.FindTensor("data")->numel(); }
bool Reduces(const Workload& w) {
  const AttrValue* r = w.FindAttr("reduction");
  return r != nullptr && std::get<std::string>(*r) != "none";
}

Config Knobs(std::initializer_list<std::pair<const char*, int64_t>> knobs) {
  Config c;
  for (const auto& [name, value] : knobs) c.Set(name, value);
  return c;
}

std::unique_ptr<Strategy> MakeScatterStrategy() {
  std::vector<StrategyRule> rules = {
      {40, "scatter_cuda_sequential", "updates <= 64 and data <= 64K elements",
       [](const Workload& w, const Target& t) {
         return OnGpu(t) && Updates(w) <= 64 && Data(w) <= 65536;
       },
       [](const Workload&, const Target&) { return Knobs({{"threads", 32}, {"fused_copy", 1}}); }},
      {38, "scatter_cuda_sequential", "updates <= 64",
       [](const Workload& w, const Target& t) { return OnGpu(t) && Updates(w) <= 64; },
       [](const Workload&, const Target&) { return Knobs({{"threads", 32}, {"fused_copy", 0}}); }},
      {35, "scatter_cuda_privatized", "reduction != none, out <= 24K, updates >= 16 * out",
       [](const Workload& w, const Target& t) {
         return OnGpu(t) && Reduces(w) && Data(w) <= 24576 && Updates(w) >= 16 * Data(w);
       },
       [](const Workload&, const Target&) { return Knobs({{"block", 512}, {"blocks_per_sm", 2}}); }},
      {30, "scatter_cuda_parallel", "any GPU workload",
       [](const Workload&, const Target& t) { return OnGpu(t); },
       [](const Workload&, const Target&) {
         return Knobs({{"block", 256}, {"items", 4}, {"copy_block", 256}, {"copy_vector", 16}});
       }},
      {10, "scatter_cuda_sorted", "any GPU workload (deterministic)",
       [](const Workload&, const Target& t) { return OnGpu(t); },
       [](const Workload&, const Target&) {
         return Knobs({{"block", 256}, {"copy_block", 256}, {"copy_vector", 16}});
       }},
      {20, "scatter_cpu_parallel", "CPU, updates >= 64K",
       [](const Workload& w, const Target& t) { return OnCpu(t) && Updates(w) >= 65536; },
       [](const Workload&, const Target& t) {
         int64_t threads = 1;
         while (threads * 2 <= t.sm_count) threads *= 2;
         return Knobs({{"threads", threads}, {"chunk", 256}});
       }},
      {10, "scatter_cpu_sequential", "CPU",
       [](const Workload&, const Target& t) { return OnCpu(t); }, nullptr},
  };
  return std::make_unique<Strategy>("scatter", std::move(rules));
}

OPSCHED_REGISTER_STRATEGY(MakeScatterStrategy());

}  // namespace
}  // namespace opsched
