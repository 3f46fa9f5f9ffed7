// The GPU pointwise implementations (CUDA; the kernels also compile for HIP):
//   pointwise_cuda_unfused      one kernel per operation, intermediates in f32 workspace
//                               buffers (one per bytecode slot), then one per output: how an
//                               eager framework runs the chain; each kernel is the
//                               interpreter running a one-operation program.
//   pointwise_cuda_interpreted  one launch of the prebuilt bytecode interpreter.
//   pointwise_cuda_hoisted      the interpreter over the hoisted form (pointwise_hoist.h):
//                               a launch per first pass, then the main program.
//   pointwise_cuda_specialised  one launch of the chain's templated kernel (pointwise_match.h).
//   pointwise_cuda_batchnorm    one launch of the batch-norm inference kernel
//                               (pointwise_batchnorm.h): statistics read once per channel run;
//                               after the hoisting's first passes where its per-channel
//                               factors are expressions (the hoisted plan).
// Knobs: block (threads), vector (elements per thread at a time), items (groups per
// thread and grid step), and for the interpreter where its slots live (shared).
#include <array>
#include <initializer_list>
#include <utility>

#include "core/format.h"
#include "core/gpu/gpu_status.h"
#include "ops/pointwise/pointwise_accumulate.h"
#include "ops/pointwise/pointwise_batchnorm.h"
#include "ops/pointwise/pointwise_cuda.h"
#include "ops/pointwise/pointwise_def.h"
#include "ops/pointwise/pointwise_match.h"
#include "ops/pointwise/pointwise_math.h"
#include "ops/pointwise/pointwise_register.h"
#include "registry/knobs.h"
#include "registry/registry.h"

namespace opsched::pointwise {
namespace {

namespace k = gpu_kernels;

gpuStream_t StreamOf(const Stream& s) { return static_cast<gpuStream_t>(s.native()); }

// The launch knobs, each implementation with its own domains and defaults
// (k::LaunchConfig's unless given: block 256, vector 4, items 1, private slots).
Knobs<k::LaunchConfig> LaunchKnobs(std::vector<int64_t> blocks, std::vector<int64_t> vectors,
                                   std::vector<int64_t> items, k::LaunchConfig defaults = {}) {
  using C = k::LaunchConfig;
  Knobs<C> knobs(defaults);
  knobs.Int("block", &C::block, std::move(blocks)).Int("vector", &C::vector, std::move(vectors));
  if (!items.empty()) knobs.Int("items", &C::items, std::move(items));
  return knobs;
}

TensorPointers PointersOf(absl::Span<const Tensor> tensors, const Bytecode& bc) {
  TensorPointers p;
  for (int t = 0; t < bc.num_inputs + bc.num_outputs; ++t) p.data[t] = tensors[t].data;
  return p;
}

class PointwiseGpu : public Implementation {
 public:
  std::string_view op() const override { return "pointwise"; }
  DeviceKind device_kind() const override { return DeviceKind::kCuda; }
  ImplementationTraits traits() const override { return {.deterministic = true, .in_place = true}; }
  Status Applicable(const Workload& w, const Target&) const override { return CompiledFor(w).status(); }

 protected:
  Status Launched(gpuError_t err) const { return gpu::ToStatus(err, "launch", name()); }
  // Launches the hoisting's first passes at `launches` (PassLaunches; RunFirstPasses) and
  // gives the main program's pointers.
  StatusOr<TensorPointers> LaunchFirstPasses(const Compiled& c, const std::vector<k::LaunchConfig>& launches,
                                             const PreparedArgs& a) const {
    return RunFirstPasses(*c.hoisted, a.tensors, static_cast<int>(c.inputs.size()), static_cast<int>(c.outputs.size()),
                          a.workspace, a.workspace_bytes, name(),
                          [&](size_t i, const HoistPass& pass, const TensorPointers& p) {
                            return Launched(k::LaunchInterpreted(pass.bytecode, pass.accumulator, p, launches[i],
                                                                 StreamOf(a.stream)));
                          });
  }
};

// The rules' vector for a program no record covers: the first of `lanes` (widest first)
// that the innermost run holds whole while at least 32768 threads remain, else 1.
int WidestVector(const Bytecode& bc, std::initializer_list<int> lanes) {
  for (const int v : lanes) {
    if (k::VectorFits(bc, v) && bc.numel / v >= 32768) return v;
  }
  return 1;
}

// The rule for a program no record covers: blocks of 128 and the widest vector that
// the innermost run allows while at least 32768 threads remain, up to 32 bytes of each
// tensor a thread: 16 lanes where every tensor is f16 or bf16, else 8. From the H100
// records of the tuned lines (bench/suites/pointwise.txt and pointwise_train.txt, 24
// trials each): 8 lanes in blocks of 128 were within 0-19% of the best config of every
// interpreted f32 chain of 4 M elements or more (the former default, 256 threads and 4
// lanes, 17-64% slower); on the f16 and bf16 chains 16 lanes in blocks of 128 were
// within 0-5% and 8 lanes 17-31% slower. At 64 K elements every config took the same
// 6 us (launch-bound).
k::LaunchConfig InterpreterRule(const Bytecode& bc) {
  bool narrow = bc.num_inputs + bc.num_outputs > 0;
  for (int t = 0; t < bc.num_inputs + bc.num_outputs; ++t) narrow = narrow && bc.types[t] != ElementType::kF32;
  k::LaunchConfig c;
  c.block = 128;
  c.vector = narrow ? WidestVector(bc, {16, 8, 4, 2}) : WidestVector(bc, {8, 4, 2});
  return c;
}

// The hoisting's first passes, each at the interpreter's rule for its small shape (chosen
// once, at Prepare).
std::vector<k::LaunchConfig> PassLaunches(const Hoisted& h) {
  std::vector<k::LaunchConfig> launches;
  for (const HoistPass& pass : h.passes) launches.push_back(InterpreterRule(pass.bytecode));
  return launches;
}

// The interpreter's knobs over the program `bc` (the workload's, or its hoisted main
// program); `shared`: the slots in a shared-memory tile instead of the accumulator's
// registers.
Knobs<k::LaunchConfig> InterpreterKnobs(const Bytecode& bc) {
  using C = k::LaunchConfig;
  Knobs<C> knobs = LaunchKnobs({128, 256, 512}, {1, 2, 4, 8, 16}, {1, 2, 4}, InterpreterRule(bc));
  knobs.Int("shared", &C::shared_slots, {0, 1})
      .Constrain("private slots: vector within the innermost run",
                 [bc](const C& l) { return l.shared_slots || k::VectorFits(bc, l.vector); })
      .Constrain("private slots: 16 lanes with blocks of at most 256",
                 [](const C& l) { return l.shared_slots || l.block <= k::MaxInterpretedBlock(l.vector); })
      .Constrain("shared slots: the tile within 48 KiB",
                 [bc](const C& l) { return !l.shared_slots || k::TileSharedBytes(bc, l) <= k::kMaxTileSharedBytes; });
  return knobs;
}

// The private slots' kernel takes at most MaxInterpretedBlock threads.
Status CheckInterpreterBlock(std::string_view name, const k::LaunchConfig& launch) {
  if (!launch.shared_slots && launch.block > k::MaxInterpretedBlock(launch.vector)) {
    return absl::InvalidArgumentError(fmt::format("{}: block {} exceeds {} at vector {}", name, launch.block,
                                                  k::MaxInterpretedBlock(launch.vector), launch.vector));
  }
  return absl::OkStatus();
}

class PointwiseCudaInterpreted : public PointwiseGpu {
 public:
  std::string_view name() const override { return "pointwise_cuda_interpreted"; }
  ConfigSpace Space(const Workload& w, const Target&) const override { return KnobsOf(w).Space(); }
  // Prepare keeps the compiled program and the launch configuration; Run binds the
  // tensors and launches.
  StatusOr<std::unique_ptr<Prepared>> Prepare(const Workload& w, const Config& config, const Target&) const override {
    OPSCHED_ASSIGN_OR_RETURN(std::shared_ptr<const Compiled> c, CompiledFor(w));
    OPSCHED_ASSIGN_OR_RETURN(const k::LaunchConfig launch, KnobsOf(w).Parse(config));
    OPSCHED_RETURN_IF_ERROR(CheckInterpreterBlock(name(), launch));
    return MakePrepared(0, [this, c, launch](const PreparedArgs& a) {
      return Launched(k::LaunchInterpreted(c->bytecode, c->accumulator, PointersOf(a.tensors, c->bytecode), launch,
                                           StreamOf(a.stream)));
    });
  }
  Status Run(const RunArgs& a) const override { return PrepareAndRun(*this, a); }

 private:
  static Knobs<k::LaunchConfig> KnobsOf(const Workload& w) {
    StatusOr<std::shared_ptr<const Compiled>> c = CompiledFor(w);
    return InterpreterKnobs(c.ok() ? (*c)->bytecode : Bytecode{});
  }
};

// The interpreter over the hoisted form (pointwise_hoist.h): one launch per first pass
// (at the interpreter's rule for its small shape), then the main program at the knobs.
class PointwiseCudaHoisted : public PointwiseGpu {
 public:
  std::string_view name() const override { return "pointwise_cuda_hoisted"; }
  Status Applicable(const Workload& w, const Target&) const override { return HoistedOf(w).status(); }
  ConfigSpace Space(const Workload& w, const Target&) const override { return KnobsOf(w).Space(); }
  size_t WorkspaceBytes(const Workload& w, const Config&) const override {
    StatusOr<std::shared_ptr<const Compiled>> c = HoistedOf(w);
    return c.ok() ? (*c)->hoisted->workspace_bytes : 0;
  }
  StatusOr<std::unique_ptr<Prepared>> Prepare(const Workload& w, const Config& config, const Target&) const override {
    OPSCHED_ASSIGN_OR_RETURN(std::shared_ptr<const Compiled> c, HoistedOf(w));
    OPSCHED_ASSIGN_OR_RETURN(const k::LaunchConfig launch, KnobsOf(w).Parse(config));
    OPSCHED_RETURN_IF_ERROR(CheckInterpreterBlock(name(), launch));
    const std::vector<k::LaunchConfig> pass_launch = PassLaunches(*c->hoisted);
    return MakePrepared(c->hoisted->workspace_bytes, [this, c, launch, pass_launch](const PreparedArgs& a) -> Status {
      OPSCHED_ASSIGN_OR_RETURN(const TensorPointers main, LaunchFirstPasses(*c, pass_launch, a));
      const Hoisted& h = *c->hoisted;
      return Launched(k::LaunchInterpreted(h.bytecode, h.accumulator, main, launch, StreamOf(a.stream)));
    });
  }
  Status Run(const RunArgs& a) const override { return PrepareAndRun(*this, a); }

 private:
  static Knobs<k::LaunchConfig> KnobsOf(const Workload& w) {
    StatusOr<std::shared_ptr<const Compiled>> c = HoistedOf(w);
    return InterpreterKnobs(c.ok() ? (*c)->hoisted->bytecode : Bytecode{});
  }
};

class PointwiseCudaSpecialised : public PointwiseGpu {
 public:
  std::string_view name() const override { return "pointwise_cuda_specialised"; }
  Status Applicable(const Workload& w, const Target&) const override { return ChainOf(w).status(); }
  ConfigSpace Space(const Workload& w, const Target&) const override { return KnobsOf(w).Space(); }
  // Prepare matches the chain and fills the kernel's arguments but the pointers, once;
  // Run binds the tensors (in role order) and launches.
  StatusOr<std::unique_ptr<Prepared>> Prepare(const Workload& w, const Config& config, const Target&) const override {
    OPSCHED_ASSIGN_OR_RETURN(const k::LaunchConfig launch, KnobsOf(w).Parse(config));
    OPSCHED_ASSIGN_OR_RETURN(Chained chained, ChainOf(w));
    const ChainMatch& m = chained.match;
    const Bytecode& bc = chained.compiled->bytecode;
    k::ChainArgs args;
    args.act = m.act;
    args.type = bc.types[0];
    args.numel = bc.numel;
    int roles[5] = {m.role[0], m.role[1], m.role[2], m.role[3], m.role[4]};
    switch (m.chain) {
      case Chain::kBiasAct: args.kind = k::ChainKind::kBiasAct; args.inputs = 2; break;
      case Chain::kActivation: args.kind = k::ChainKind::kActivation; args.inputs = 1; break;
      case Chain::kLstmCell: args.kind = k::ChainKind::kLstmCell; args.inputs = 5; break;
      case Chain::kScaleResidual:
        if (m.role[1] < 0) {
          args.kind = k::ChainKind::kScaleResidualConst;
          args.constant = m.constant;
          args.inputs = 2;
          roles[1] = m.role[2];
        } else {
          args.kind = k::ChainKind::kScaleResidual;
          args.inputs = 3;
        }
        break;
    }
    // Tensor indices of the kernel's inputs and outputs.
    std::array<int, 5> in_tensor{};
    std::array<int, 2> out_tensor{};
    for (int i = 0; i < args.inputs; ++i) {
      in_tensor[i] = roles[i];
      args.period[i] = Period(bc, roles[i]);
    }
    k::SetPeriods(args);
    if (m.chain == Chain::kLstmCell) {
      args.outputs = 2;
      out_tensor = {bc.num_inputs + m.c_out, bc.num_inputs + m.h_out};
    } else {
      args.outputs = 1;
      out_tensor[0] = bc.num_inputs;
    }
    return MakePrepared(0, [this, args, in_tensor, out_tensor, launch](const PreparedArgs& a) {
      k::ChainArgs bound = args;
      for (int i = 0; i < bound.inputs; ++i) bound.in[i] = a.tensors[in_tensor[i]].data;
      for (int o = 0; o < bound.outputs; ++o) bound.out[o] = a.tensors[out_tensor[o]].data;
      return Launched(k::LaunchChain(bound, launch, StreamOf(a.stream)));
    });
  }
  Status Run(const RunArgs& a) const override { return PrepareAndRun(*this, a); }

 private:
  static Knobs<k::LaunchConfig> KnobsOf(const Workload& w) {
    const StatusOr<std::shared_ptr<const Compiled>> c = CompiledFor(w);
    return LaunchKnobs({128, 256, 512, 1024}, {1, 4, 8}, {1, 2, 4}, SpecialisedRule(c.ok() ? (*c)->bytecode : Bytecode{}));
  }
  // The rule for a chain no record covers: blocks of 256, one group a thread, and 16
  // bytes of every tensor a thread (8 lanes of f16/bf16, 4 of f32) while at least 32768
  // threads remain and the innermost run holds whole vectors, else one lane. From the
  // H100 records of the tuned chains (bench/suites/pointwise.txt, dtypes.txt): 4 lanes of
  // f16/bf16 took 1.10-1.26x the best config of the four chains of 8M elements or more,
  // 8 lanes 1.01-1.05x (the f32 chains' best take 4 lanes: 1.00-1.01x); the LSTM cells
  // of 6.4K to 64K elements took 1.08-1.13x with 4 lanes, 1.00-1.03x with one.
  static k::LaunchConfig SpecialisedRule(const Bytecode& bc) {
    const bool narrow = bc.num_inputs > 0 && bc.types[0] != ElementType::kF32;
    k::LaunchConfig c;
    c.block = 256;
    c.vector = narrow ? WidestVector(bc, {8, 4}) : WidestVector(bc, {4});
    return c;
  }
  struct Chained {
    std::shared_ptr<const Compiled> compiled;
    ChainMatch match;
  };
  // The workload's program and chain, or why the chain kernels cannot run it.
  static StatusOr<Chained> ChainOf(const Workload& w) {
    OPSCHED_ASSIGN_OR_RETURN(std::shared_ptr<const Compiled> c, CompiledFor(w));
    const std::optional<ChainMatch> m = SpecialisedChain(w);
    if (!m) {
      return absl::FailedPreconditionError(
          "not one of bias+act, scale+residual, an activation alone, lstm cell over one dtype with periodic inputs");
    }
    if (c->bytecode.numel >= (int64_t(1) << 32)) {
      return absl::InvalidArgumentError("the chain kernels index elements in 32 bits");
    }
    return Chained{std::move(c), *m};
  }
};

class PointwiseCudaBatchNorm : public PointwiseGpu {
 public:
  std::string_view name() const override { return "pointwise_cuda_batchnorm"; }
  Status Applicable(const Workload& w, const Target&) const override { return PlanOf(w).status(); }
  ConfigSpace Space(const Workload& w, const Target&) const override {
    StatusOr<Planned> p = PlanOf(w);
    return KnobsOf(p.ok() && p->narrow, p.ok() && p->plan.inner > 1).Space();
  }
  size_t WorkspaceBytes(const Workload& w, const Config&) const override {
    StatusOr<Planned> p = PlanOf(w);
    return p.ok() && p->plan.hoisted ? p->compiled->hoisted->workspace_bytes : 0;
  }
  // Prepare plans once and fills the kernel's arguments but the pointers; Run binds them.
  StatusOr<std::unique_ptr<Prepared>> Prepare(const Workload& w, const Config& config, const Target&) const override {
    OPSCHED_ASSIGN_OR_RETURN(const Planned planned, PlanOf(w));
    const BatchNormPlan& plan = planned.plan;
    OPSCHED_ASSIGN_OR_RETURN(const k::LaunchConfig launch, KnobsOf(planned.narrow, plan.inner > 1).Parse(config));
    const std::shared_ptr<const Compiled>& c = planned.compiled;
    const Bytecode& bc = plan.hoisted ? c->hoisted->bytecode : c->bytecode;
    k::BatchNormArgs args;
    args.type = bc.types[plan.x];
    for (int p = 0; p < 4; ++p) {
      if (plan.param[p] >= 0) args.param_type[p] = bc.types[plan.param[p]];
      args.channel_stride[p] = plan.channel_stride[p];
    }
    args.eps = plan.eps;
    args.factor = plan.factor;
    args.gate = plan.gate;
    args.act = plan.act;
    for (int b = 0; b < kMaxBounds; ++b) args.bound[b] = plan.bound[b];
    args.numel = plan.numel;
    args.channels = plan.channels;
    args.inner = plan.inner;
    const int wave_blocks = k::BatchNormWaveBlocks(args, launch);  // once: an occupancy query
    // A hoisted plan: the first passes (at the interpreter's rule for their small shapes)
    // write the per-channel values to workspace; the kernel reads the main program's
    // tensors (the workload's inputs, the values, the output).
    const std::vector<k::LaunchConfig> pass_launch =
        plan.hoisted ? PassLaunches(*c->hoisted) : std::vector<k::LaunchConfig>{};
    const size_t workspace = plan.hoisted ? c->hoisted->workspace_bytes : 0;
    const int out = bc.num_inputs;
    auto run = [this, c, args, plan, out, launch, pass_launch, wave_blocks](const PreparedArgs& a) -> Status {
      TensorPointers p;
      if (plan.hoisted) {
        OPSCHED_ASSIGN_OR_RETURN(p, LaunchFirstPasses(*c, pass_launch, a));
      } else {
        p = PointersOf(a.tensors, c->bytecode);
      }
      k::BatchNormArgs bound = args;
      bound.x = p.data[plan.x];
      for (int q = 0; q < 4; ++q) bound.param[q] = plan.param[q] >= 0 ? p.data[plan.param[q]] : nullptr;
      bound.out = const_cast<void*>(p.data[out]);
      // After first passes, as the last one's dependent: it launches while that pass
      // runs and reads the pass's values only once it is done (the pass lets it launch
      // at its start); its first loads of x overlap the pass.
      return Launched(k::LaunchBatchNorm(bound, launch, StreamOf(a.stream), wave_blocks, plan.hoisted));
    };
    return MakePrepared(workspace, std::move(run));
  }
  Status Run(const RunArgs& a) const override { return PrepareAndRun(*this, a); }

 private:
  struct Planned {
    std::shared_ptr<const Compiled> compiled;
    BatchNormPlan plan;
    bool narrow = false;  // x (and out) f16 or bf16
  };
  // The workload's program and plan, or why the batch-norm kernel cannot run it.
  static StatusOr<Planned> PlanOf(const Workload& w) {
    OPSCHED_ASSIGN_OR_RETURN(std::shared_ptr<const Compiled> c, CompiledFor(w));
    OPSCHED_ASSIGN_OR_RETURN(BatchNormPlan plan, PlanBatchNorm(*c));
    if (plan.numel >= (int64_t(1) << 32)) {
      return absl::InvalidArgumentError("the batch-norm kernel indexes elements in 32 bits");
    }
    const bool narrow = c->bytecode.types[plan.x] != ElementType::kF32;
    return Planned{std::move(c), plan, narrow};
  }
  // 16 lanes (32 bytes) only of f16 or bf16. The default: 16 lanes of f16/bf16 over runs
  // of one channel (H100, the gate build against this one in one run: 0.96-0.97x the
  // time of 8 lanes on three held-out NCHW f16 chains), else 8 (channels-last f16 took
  // 1.23x the time with 16).
  static Knobs<k::LaunchConfig> KnobsOf(bool narrow, bool runs) {
    Knobs<k::LaunchConfig> knobs =
        LaunchKnobs({128, 256, 512, 1024}, narrow ? std::vector<int64_t>{1, 2, 4, 8, 16} : std::vector<int64_t>{1, 2, 4, 8},
                    {1, 2, 4, 8}, k::LaunchConfig{.block = 256, .vector = narrow && runs ? 16 : 8});
    knobs.Constrain("16 lanes with blocks of at most 512",
                    [](const k::LaunchConfig& l) { return l.block <= k::MaxBatchNormBlock(l.vector); });
    return knobs;
  }
};

class PointwiseCudaUnfused : public PointwiseGpu {
 public:
  std::string_view name() const override { return "pointwise_cuda_unfused"; }
  // Each kernel is the interpreter's over a one-operation program (no items knob).
  static Knobs<k::LaunchConfig> KnobsOf() { return LaunchKnobs({256, 512}, {1, 4}, {}); }
  ConfigSpace Space(const Workload&, const Target&) const override { return KnobsOf().Space(); }
  size_t WorkspaceBytes(const Workload& w, const Config&) const override {
    StatusOr<std::shared_ptr<const Compiled>> c = CompiledFor(w);
    if (!c.ok()) return 0;
    return UnfusedWorkspaceBytes((*c)->bytecode);
  }

  Status Run(const RunArgs& a) const override { return PrepareAndRun(*this, a); }
  // Prepare keeps the compiled program and the launch config; Run binds the tensors.
  StatusOr<std::unique_ptr<Prepared>> Prepare(const Workload& w, const Config& config, const Target&) const override {
    OPSCHED_ASSIGN_OR_RETURN(std::shared_ptr<const Compiled> c, CompiledFor(w));
    OPSCHED_ASSIGN_OR_RETURN(const k::LaunchConfig launch, KnobsOf().Parse(config));
    return MakePrepared(UnfusedWorkspaceBytes(c->bytecode), [this, c, launch](const PreparedArgs& a) {
      return RunUnfused(c->bytecode, launch, a);
    });
  }

 private:
  Status RunUnfused(const Bytecode& bc, const k::LaunchConfig& launch, const PreparedArgs& a) const {
    const int64_t n = bc.numel;
    if (n == 0) return absl::OkStatus();
    if (a.workspace_bytes < UnfusedWorkspaceBytes(bc)) {
      return absl::InternalError("pointwise_cuda_unfused: workspace too small");
    }
    float* ws = static_cast<float*>(a.workspace);
    const TensorPointers all = PointersOf(a.tensors, bc);
    // Where each slot's value lives now: an input (loads are not copied), a constant, or
    // the slot's workspace buffer (f32, contiguous over the iteration shape).
    struct Source {
      int input = -1;
      bool constant = false;
      float value = 0;
    };
    Source src[kMaxSlots];
    int64_t contiguous[kMaxRank] = {};
    for (int d = bc.rank - 1; d >= 0; --d) contiguous[d] = d == bc.rank - 1 ? 1 : contiguous[d + 1] * bc.shape[d + 1];
    // One kernel: `out` (a slot's buffer, or output `output`) = op(operands).
    auto pass = [&](OpCode op, int dst_slot, int output, int slot_a, int slot_b) -> Status {
      Bytecode node;
      node.rank = bc.rank;
      node.numel = n;
      for (int d = 0; d < bc.rank; ++d) node.shape[d] = bc.shape[d];
      TensorPointers p;
      int code = 0;
      auto operand = [&](int slot, int reg) {
        const Source& s = src[slot];
        Instruction in;
        in.dst = static_cast<uint8_t>(reg);
        if (s.constant) {
          in.op = OpCode::kConst;
          in.value = s.value;
        } else {
          const int t = node.num_inputs++;
          in.op = OpCode::kLoad;
          in.a = static_cast<uint8_t>(t);
          if (s.input >= 0) {
            node.types[t] = bc.types[s.input];
            for (int d = 0; d < bc.rank; ++d) node.strides[t][d] = bc.strides[s.input][d];
            p.data[t] = all.data[s.input];
          } else {
            node.types[t] = ElementType::kF32;
            for (int d = 0; d < bc.rank; ++d) node.strides[t][d] = contiguous[d];
            p.data[t] = ws + static_cast<int64_t>(slot) * n;
          }
        }
        node.code[code++] = in;
      };
      operand(slot_a, 0);
      if (IsBinary(op)) operand(slot_b, 1);
      if (op != OpCode::kStore) {
        Instruction in;
        in.op = op;
        in.dst = 0;
        in.a = 0;
        in.b = 1;
        node.code[code++] = in;
      }
      const int t = node.num_inputs;
      node.num_outputs = 1;
      for (int d = 0; d < bc.rank; ++d) node.strides[t][d] = contiguous[d];
      if (output >= 0) {
        node.types[t] = bc.types[bc.num_inputs + output];
        p.data[t] = all.data[bc.num_inputs + output];
      } else {
        node.types[t] = ElementType::kF32;
        p.data[t] = ws + static_cast<int64_t>(dst_slot) * n;
      }
      Instruction store;
      store.op = OpCode::kStore;
      store.dst = 0;
      store.a = 0;
      node.code[code++] = store;
      node.num_instructions = code;
      node.num_slots = 2;
      OPSCHED_ASSIGN_OR_RETURN(AccCode node_code, ToAccumulatorForm(node));
      return Launched(k::LaunchInterpreted(node, node_code, p, launch, StreamOf(a.stream)));
    };
    for (int i = 0; i < bc.num_instructions; ++i) {
      const Instruction& in = bc.code[i];
      if (in.op == OpCode::kLoad) {
        src[in.dst] = Source{in.a, false, 0};
      } else if (in.op == OpCode::kConst) {
        src[in.dst] = Source{-1, true, in.value};
      } else if (in.op != OpCode::kStore) {
        OPSCHED_RETURN_IF_ERROR(pass(in.op, in.dst, -1, in.a, in.b));
        src[in.dst] = Source{};
      }
    }
    // An output that is an input as such is copied to the workspace first: no store may
    // overwrite an input (in place) that a later store still reads.
    for (int i = 0; i < bc.num_instructions; ++i) {
      const Instruction& in = bc.code[i];
      if (in.op == OpCode::kStore && src[in.a].input >= 0) {
        OPSCHED_RETURN_IF_ERROR(pass(OpCode::kCastF32, in.a, -1, in.a, 0));
        src[in.a] = Source{};
      }
    }
    for (int i = 0; i < bc.num_instructions; ++i) {
      const Instruction& in = bc.code[i];
      if (in.op == OpCode::kStore) OPSCHED_RETURN_IF_ERROR(pass(OpCode::kStore, -1, in.dst, in.a, 0));
    }
    return absl::OkStatus();
  }
};

}  // namespace

Status RegisterCudaImpls(Registry& registry) {
  OPSCHED_RETURN_IF_ERROR(registry.AddImplementation(std::make_unique<PointwiseCudaUnfused>()));
  OPSCHED_RETURN_IF_ERROR(registry.AddImplementation(std::make_unique<PointwiseCudaInterpreted>()));
  OPSCHED_RETURN_IF_ERROR(registry.AddImplementation(std::make_unique<PointwiseCudaHoisted>()));
  OPSCHED_RETURN_IF_ERROR(registry.AddImplementation(std::make_unique<PointwiseCudaSpecialised>()));
  OPSCHED_RETURN_IF_ERROR(registry.AddImplementation(std::make_unique<PointwiseCudaBatchNorm>()));
  return absl::OkStatus();
}

}  // namespace opsched::pointwise
