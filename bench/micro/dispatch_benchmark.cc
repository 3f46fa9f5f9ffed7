// Host-side cost of dispatch: a cached decision lookup, the typed entry point's workload
// build plus lookup, and a whole Runtime call compared with launching the same kernel
// directly (GPU cases skip without a GPU); a Runtime pointwise call (an LSTM cell); the selector's first decision for a workload
// with no record, over the largest candidate space, and its cached lookup (GPU, with the
// model in OPSCHED_BENCH_MODEL, default the shipped H100 model). Figures go to
// docs/consumer-guide.md and docs/selector.md.
#include <cstdlib>
#include <string>

#include <benchmark/benchmark.h>

#include "absl/strings/str_split.h"
#include "core/buffer.h"
#include "core/gpu/gpu_backend.h"
#include "opsched/runtime.h"
#include "records/database.h"
#include "selector/selector.h"
#include "ops/scatter/scatter_def.h"
#include "strategies/dispatcher.h"
#include "strategies/register_all.h"
#include "tuner/trial.h"

#if defined(OPSCHED_BENCH_CUDA)
#include "ops/scatter/scatter_cuda.h"
#endif

namespace opsched {
namespace {

const char* kLine = "scatter data=f32[100] indices=i64[1] updates=f32[1] axis=0 reduction=none";

void BM_CachedDecide(benchmark::State& state) {
  Dispatcher d(Registry::Global(), CpuTarget(), nullptr, {});
  Workload w = *ParseWorkload(kLine);
  if (!d.Decide(w).ok()) state.SkipWithError("decide failed");
  for (auto _ : state) benchmark::DoNotOptimize(d.Decide(w));
}
BENCHMARK(BM_CachedDecide);

// What Runtime::Scatter does before running: fill a per-thread workload, then decide.
void BM_TypedWorkloadAndDecide(benchmark::State& state) {
  Dispatcher d(Registry::Global(), CpuTarget(), nullptr, {});
  TensorDesc data = TensorDesc::Contiguous(DType::kF32, {100});
  TensorDesc idx = TensorDesc::Contiguous(DType::kI64, {1});
  TensorDesc upd = TensorDesc::Contiguous(DType::kF32, {1});
  thread_local Workload w;
  for (auto _ : state) {
    w.Clear();
    w.set_op("scatter");
    w.SetTensor("data", data);
    w.SetTensor("indices", idx);
    w.SetTensor("updates", upd);
    w.SetAttr("axis", int64_t(0));
    w.SetAttr("reduction", std::string("none"));
    benchmark::DoNotOptimize(d.Decide(w));
  }
}
BENCHMARK(BM_TypedWorkloadAndDecide);

struct Inputs {
  std::unique_ptr<Trial> trial;
  std::unique_ptr<Runtime> runtime;
};

Inputs Prepare(const Target& target) {
  Inputs in;
  Workload w = *Registry::Global().ParseCanonical(kLine);
  in.trial = *Trial::Create(Registry::Global(), w, target, TrialOptions{});
  RuntimeOptions o;
  o.target = target;
  in.runtime = *Runtime::Create(o);
  return in;
}

void RuntimeScatter(benchmark::State& state, const Target& target) {
  Inputs in = Prepare(target);
  const std::vector<Tensor>& t = in.trial->tensors();
  for (auto _ : state) {
    Status s = in.runtime->Scatter(t[0], t[1], t[2], t[3], 0, ScatterReduction::kNone, in.trial->stream());
    if (!s.ok()) state.SkipWithError(std::string(s.message()).c_str());
  }
  if (!in.runtime->Synchronize(in.trial->stream()).ok()) state.SkipWithError("synchronize failed");
}

// The whole consumer call on the CPU (dispatch, validation, the sequential kernel).
void BM_RuntimeScatterCpu(benchmark::State& state) { RuntimeScatter(state, CpuTarget()); }
BENCHMARK(BM_RuntimeScatterCpu);

// The CPU implementation called directly, without the Runtime.
void BM_DirectScatterCpu(benchmark::State& state) {
  Inputs in = Prepare(CpuTarget());
  const Implementation* impl = Registry::Global().FindImplementation("scatter_cpu_sequential");
  for (auto _ : state) {
    if (!in.trial->Launch(*impl, Config()).ok()) state.SkipWithError("launch failed");
  }
}
BENCHMARK(BM_DirectScatterCpu);

// Runtime::Pointwise of an LSTM cell's pointwise part (the issue-20 chain): the program
// text and named tensors to a launch, per call, back to back.
std::string LstmLine(int batch, int hidden) {
  std::string line = "pointwise";
  for (const char* name : {"c", "f", "g", "i", "o", "c2", "h"}) {
    line += " " + std::string(name) + "=f32[" + std::to_string(batch) + "," + std::to_string(hidden) + "]";
  }
  return line + " expr=\"c2=sigmoid(f)*c+sigmoid(i)*tanh(g); h=sigmoid(o)*tanh(c2)\"";
}

void RuntimeLstm(benchmark::State& state, const Target& target, int batch, int hidden) {
  const Workload w = *Registry::Global().ParseCanonical(LstmLine(batch, hidden));
  auto trial = Trial::Create(Registry::Global(), w, target, TrialOptions{});
  if (!trial.ok()) return state.SkipWithError(std::string(trial.status().message()).c_str());
  RuntimeOptions o;
  o.target = target;
  auto runtime = Runtime::Create(o);
  if (!runtime.ok()) return state.SkipWithError("runtime");
  const std::vector<Tensor>& t = (*trial)->tensors();  // c f g i o, then c2 h
  const NamedTensor in[] = {{"c", t[0]}, {"f", t[1]}, {"g", t[2]}, {"i", t[3]}, {"o", t[4]}};
  const NamedTensor out[] = {{"c2", t[5]}, {"h", t[6]}};
  const std::string program = "c2=sigmoid(f)*c+sigmoid(i)*tanh(g); h=sigmoid(o)*tanh(c2)";
  for (auto _ : state) {
    Status s = (*runtime)->Pointwise(program, in, out, (*trial)->stream());
    if (!s.ok()) state.SkipWithError(std::string(s.message()).c_str());
  }
  if (!(*runtime)->Synchronize((*trial)->stream()).ok()) state.SkipWithError("synchronize failed");
}

// On the CPU with 8 elements: the host cost of a pointwise call (the loop is negligible).
void BM_RuntimePointwiseLstmCpu(benchmark::State& state) { RuntimeLstm(state, CpuTarget(), 1, 8); }
BENCHMARK(BM_RuntimePointwiseLstmCpu);

#if defined(OPSCHED_BENCH_CUDA)
bool HaveGpu(benchmark::State& state) {
  if (gpu::DeviceCount() > 0) return true;
  state.SkipWithError(("no GPU: " + gpu::NoDeviceReason()).c_str());
  return false;
}

// Runtime::Scatter of a 1-element write on the GPU: wall time per call, back to back.
void BM_RuntimeScatterGpu(benchmark::State& state) {
  if (!HaveGpu(state)) return;
  RuntimeScatter(state, *QueryTarget(Device{gpu::BackendKind(), 0}));
}
BENCHMARK(BM_RuntimeScatterGpu)->UseRealTime();

// The same kernel launched directly (the raw launch the Runtime adds its cost to).
void BM_RawLaunchGpu(benchmark::State& state) {
  if (!HaveGpu(state)) return;
  Inputs in = Prepare(*QueryTarget(Device{gpu::BackendKind(), 0}));
  scatter::Params p = scatter::MakeParams(in.trial->workload());
  const std::vector<Tensor>& t = in.trial->tensors();
  p.data = t[0].data;
  p.indices = t[1].data;
  p.updates = t[2].data;
  p.out = t[3].data;
  auto stream = static_cast<gpuStream_t>(in.trial->stream().native());
  for (auto _ : state) {
    if (scatter::gpu_kernels::LaunchSequential(p, true, 32, ErrorSlot{}, stream) != gpuSuccess) {
      state.SkipWithError("launch failed");
    }
  }
  (void)in.trial->stream().Synchronize();
}
BENCHMARK(BM_RawLaunchGpu)->UseRealTime();

// The LSTM cell at char-rnn size (batch 50, hidden 128) on the GPU: wall time per call.
void BM_RuntimePointwiseLstmGpu(benchmark::State& state) {
  if (!HaveGpu(state)) return;
  RuntimeLstm(state, *QueryTarget(Device{gpu::BackendKind(), 0}), 50, 128);
}
BENCHMARK(BM_RuntimePointwiseLstmGpu)->UseRealTime();
// The selector on the GPU: the workload with the largest candidate space among these
// real-model layers (held-out lines of bench/suites/models/) is the one timed.
constexpr const char* kSpaces[] = {
    "conv2d x=f32[8,64,56,56] w=f32[64,64,3,3] stride=1,1 pad=1,1 dilation=1,1 groups=1 layout=nchw math=fp32",
    "conv2d_backward x=f32[8,128,28,28] w=f32[128,128,3,3] dy=f32[8,128,28,28] stride=1,1 pad=1,1 dilation=1,1 "
    "groups=1 layout=nchw math=fp32",
    "scatter data=f16[32000,4096] indices=i64[2048,4096] updates=f16[2048,4096] axis=0 reduction=add",
    "reduce x=f32[128,64,112,112] axes=0,2,3 op=sum",
};

// The line of kSpaces with the most legal candidates on `target`, and that count.
std::pair<std::string, size_t> LargestSpace(const Target& target) {
  Dispatcher d(Registry::Global(), target, nullptr, {});
  std::pair<std::string, size_t> out{kSpaces[0], 0};
  for (const char* line : kSpaces) {
    const size_t n = d.LegalCandidates(*Registry::Global().ParseCanonical(line)).size();
    if (n > out.second) out = {line, n};
  }
  return out;
}

std::unique_ptr<Selector> BenchModel(benchmark::State& state, const Target& target) {
  const char* env = std::getenv("OPSCHED_BENCH_MODEL");
  const std::string path = env != nullptr ? env : "bench/records/nvidia-h100/model.opsm";
  StatusOr<std::unique_ptr<Selector>> model = Selector::Load(path);
  if (!model.ok()) {
    state.SkipWithError(std::string(model.status().message()).c_str());
    return nullptr;
  }
  if (Status s = (*model)->Serves(target, true); !s.ok()) {
    state.SkipWithError(std::string(s.message()).c_str());
    return nullptr;
  }
  return *std::move(model);
}

// A first-time decision: canonicalise, enumerate the legal candidates, predict each, pick;
// with `db`'s records when given. A fresh dispatcher per iteration, so that nothing is
// cached.
void TimeFirstPredictedDecision(benchmark::State& state, const records::Database* db, const DispatchOptions& options) {
  const Target target = *QueryTarget(Device{gpu::BackendKind(), 0});
  std::unique_ptr<Selector> model = BenchModel(state, target);
  if (model == nullptr) return;
  const auto [line, count] = LargestSpace(target);
  state.SetLabel(line.substr(0, line.find(' ')));
  state.counters["candidates"] = static_cast<double>(count);
  if (db != nullptr) state.counters["records"] = static_cast<double>(db->size());
  const Workload w = *ParseWorkload(line);
  Dispatcher probe(Registry::Global(), target, db, options, model.get());
  StatusOr<const CachedDecision*> first = probe.Decide(w);
  if (!first.ok() || (*first)->decision.provenance != Provenance::kPredicted) {
    state.SkipWithError("the model did not decide");
    return;
  }
  for (auto _ : state) {
    Dispatcher d(Registry::Global(), target, db, options, model.get());
    benchmark::DoNotOptimize(d.Decide(w));
  }
}

void BM_FirstPredictedDecision(benchmark::State& state) {
  if (!HaveGpu(state)) return;
  TimeFirstPredictedDecision(state, nullptr,
                             DispatchOptions{.allow_transferred_records = true, .model_max_distance = 1e9});
}
BENCHMARK(BM_FirstPredictedDecision)->Unit(benchmark::kMicrosecond)->UseRealTime();

// The same first decision with record logs loaded (OPSCHED_BENCH_RECORDS, paths separated
// by ':'), the target's own: a prediction is then also checked against the nearest tuned
// workload that measured it (Dispatcher::ContestedByRecords), one more nearest query.
void BM_FirstPredictedDecisionWithRecords(benchmark::State& state) {
  if (!HaveGpu(state)) return;
  const char* env = std::getenv("OPSCHED_BENCH_RECORDS");
  if (env == nullptr || *env == 0) {
    state.SkipWithError("OPSCHED_BENCH_RECORDS names no record logs");
    return;
  }
  records::Database db;
  for (absl::string_view path : absl::StrSplit(env, ':', absl::SkipEmpty())) {
    if (Status s = db.Load(std::string(path)); !s.ok()) {
      state.SkipWithError(std::string(s.message()).c_str());
      return;
    }
  }
  TimeFirstPredictedDecision(state, &db, DispatchOptions{.model_max_distance = 1e9});
}
BENCHMARK(BM_FirstPredictedDecisionWithRecords)->Unit(benchmark::kMicrosecond)->UseRealTime();

// The same decision once cached.
void BM_CachedPredictedDecision(benchmark::State& state) {
  if (!HaveGpu(state)) return;
  const Target target = *QueryTarget(Device{gpu::BackendKind(), 0});
  std::unique_ptr<Selector> model = BenchModel(state, target);
  if (model == nullptr) return;
  const Workload w = *ParseWorkload(LargestSpace(target).first);
  Dispatcher d(Registry::Global(), target, nullptr,
               DispatchOptions{.allow_transferred_records = true, .model_max_distance = 1e9}, model.get());
  if (!d.Decide(w).ok()) state.SkipWithError("decide failed");
  for (auto _ : state) benchmark::DoNotOptimize(d.Decide(w));
}
BENCHMARK(BM_CachedPredictedDecision);
#endif

}  // namespace
}  // namespace opsched

int main(int argc, char** argv) {
  if (!opsched::RegisterAll().ok()) return 1;
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
