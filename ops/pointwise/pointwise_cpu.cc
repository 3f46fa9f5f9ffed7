// Pointwise on the CPU, three general implementations:
//   pointwise_cpu_unfused      one pass over every element per operation, intermediates in
//                              f32 workspace buffers (one per bytecode slot), outputs
//                              written by a final pass each: how an eager framework runs it.
//   pointwise_cpu_interpreted  one pass running the program per element in its
//                              accumulator form (RunAccumulated, pointwise_interpret.h).
//   pointwise_cpu_hoisted      the interpreter over the hoisted form (pointwise_hoist.h):
//                              a first pass per hoisted shape into workspace, then the
//                              main program; where the program has something to hoist.
#include <algorithm>
#include <vector>

#include "ops/pointwise/pointwise_cpu_loops.h"
#include "ops/pointwise/pointwise_def.h"
#include "ops/pointwise/pointwise_register.h"
#include "registry/cpu_knobs.h"
#include "registry/registry.h"

namespace opsched::pointwise {
namespace {

class PointwiseCpuBase : public Implementation {
 public:
  std::string_view op() const override { return "pointwise"; }
  DeviceKind device_kind() const override { return DeviceKind::kCpu; }
  // An output may alias the first input (of its own descriptor): every element's loads
  // come before its stores.
  ImplementationTraits traits() const override { return {.deterministic = true, .in_place = true}; }
  Status Applicable(const Workload& w, const Target&) const override { return CompiledFor(w).status(); }
};

class PointwiseCpuUnfused : public PointwiseCpuBase {
 public:
  std::string_view name() const override { return "pointwise_cpu_unfused"; }
  ConfigSpace Space(const Workload&, const Target& target) const override { return CpuThreadKnobs(target).Space(); }
  size_t WorkspaceBytes(const Workload& w, const Config&) const override {
    StatusOr<std::shared_ptr<const Compiled>> c = CompiledFor(w);
    if (!c.ok()) return 0;
    return UnfusedWorkspaceBytes((*c)->bytecode);
  }

  Status Run(const RunArgs& a) const override { return PrepareAndRun(*this, a); }
  // Prepare keeps the compiled program and the knob; Run binds the tensors.
  StatusOr<std::unique_ptr<Prepared>> Prepare(const Workload& w, const Config& config,
                                              const Target& target) const override {
    OPSCHED_ASSIGN_OR_RETURN(std::shared_ptr<const Compiled> c, CompiledFor(w));
    OPSCHED_ASSIGN_OR_RETURN(const CpuKnobs knobs, CpuThreadKnobs(target).Parse(config));
    const int threads = knobs.threads;
    return MakePrepared(UnfusedWorkspaceBytes(c->bytecode),
                        [c, threads](const PreparedArgs& a) { return RunUnfused(c->bytecode, threads, a); });
  }

 private:
  static Status RunUnfused(const Bytecode& bc, int threads, const PreparedArgs& a) {
    const TensorPointers p = cpu::PointersOf(a.tensors.data(), bc.num_inputs + bc.num_outputs);
    const int64_t n = bc.numel;
    if (a.workspace_bytes < UnfusedWorkspaceBytes(bc)) {
      return absl::InternalError("pointwise_cpu_unfused: workspace too small");
    }
    float* ws = static_cast<float*>(a.workspace);
    // Where each slot's value lives now: an input (loads are not copied), a constant, or
    // the slot's workspace buffer.
    struct Source {
      int input = -1;
      bool constant = false;
      float value = 0;
    };
    Source src[kMaxSlots];
    auto read = [&](const Source& s, int slot, int64_t i, const int64_t* off) {
      if (s.constant) return s.value;
      if (s.input >= 0) return LoadElement(bc.types[s.input], p.data[s.input], off[s.input]);
      return ws[slot * n + i];
    };
    // One pass: ws[dst][i] = f(operands) (or, for a store, the output).
    auto pass = [&](const Instruction& in) {
      const Source sa = src[in.a], sb = src[in.b];
      cpu::Parallel(n, 65536, threads, [&](int64_t begin, int64_t end) {
        int64_t i = begin;
        cpu::ForEachRun(bc, begin, end, [&](int64_t* off, int64_t count, const int64_t* inner) {
          for (int64_t k = 0; k < count; ++k, ++i) {
            const float x = read(sa, in.a, i, off);
            if (in.op == OpCode::kStore) {
              const int t = bc.num_inputs + in.dst;
              StoreElement(bc.types[t], const_cast<void*>(p.data[t]), off[t], x);
            } else if (IsBinary(in.op)) {
              ws[in.dst * n + i] = Binary(in.op, x, read(sb, in.b, i, off));
            } else {
              ws[in.dst * n + i] = Unary(in.op, x);
            }
            for (int t = 0; t < bc.num_inputs + bc.num_outputs; ++t) off[t] += inner[t];
          }
        });
      });
    };
    for (int k = 0; k < bc.num_instructions; ++k) {
      const Instruction& in = bc.code[k];
      if (in.op == OpCode::kLoad) {
        src[in.dst] = Source{in.a, false, 0};
      } else if (in.op == OpCode::kConst) {
        src[in.dst] = Source{-1, true, in.value};
      } else if (in.op != OpCode::kStore) {
        pass(in);
        src[in.dst] = Source{};
      }
    }
    // An output that is an input as such is copied to the workspace first: no store may
    // overwrite an input (in place) that a later store still reads.
    for (int k = 0; k < bc.num_instructions; ++k) {
      const Instruction& in = bc.code[k];
      if (in.op == OpCode::kStore && src[in.a].input >= 0) {
        Instruction copy;
        copy.op = OpCode::kCastF32;
        copy.dst = in.a;
        copy.a = in.a;
        pass(copy);
        src[in.a] = Source{};
      }
    }
    for (int k = 0; k < bc.num_instructions; ++k) {
      if (bc.code[k].op == OpCode::kStore) pass(bc.code[k]);
    }
    return absl::OkStatus();
  }
};

// `chunk`: elements per piece of work.
Knobs<CpuKnobs> InterpreterKnobs(const Target& target) { return CpuChunkKnobs(target, {4096, 65536, 1048576}, 65536); }

// The interpreter's knobs as its loops take them.
struct Chunking {
  int threads;
  int64_t chunk;
};
StatusOr<Chunking> ChunkingOf(const Target& target, const Config& config) {
  OPSCHED_ASSIGN_OR_RETURN(const CpuKnobs knobs, InterpreterKnobs(target).Parse(config));
  return Chunking{knobs.threads, std::max<int64_t>(knobs.chunk, 1)};
}

class PointwiseCpuInterpreted : public PointwiseCpuBase {
 public:
  std::string_view name() const override { return "pointwise_cpu_interpreted"; }
  ConfigSpace Space(const Workload&, const Target& target) const override { return InterpreterKnobs(target).Space(); }
  // Prepare keeps the compiled program and the knobs; Run binds the tensors.
  StatusOr<std::unique_ptr<Prepared>> Prepare(const Workload& w, const Config& config,
                                              const Target& target) const override {
    OPSCHED_ASSIGN_OR_RETURN(std::shared_ptr<const Compiled> c, CompiledFor(w));
    OPSCHED_ASSIGN_OR_RETURN(const Chunking k, ChunkingOf(target, config));
    return MakePrepared(0, [c, k](const PreparedArgs& a) {
      const Bytecode& bc = c->bytecode;
      cpu::Interpret(bc, c->accumulator, cpu::PointersOf(a.tensors.data(), bc.num_inputs + bc.num_outputs), k.threads,
                k.chunk);
      return absl::OkStatus();
    });
  }
  Status Run(const RunArgs& a) const override { return PrepareAndRun(*this, a); }
};

class PointwiseCpuHoisted : public PointwiseCpuBase {
 public:
  std::string_view name() const override { return "pointwise_cpu_hoisted"; }
  Status Applicable(const Workload& w, const Target&) const override { return HoistedOf(w).status(); }
  ConfigSpace Space(const Workload&, const Target& target) const override { return InterpreterKnobs(target).Space(); }
  size_t WorkspaceBytes(const Workload& w, const Config&) const override {
    StatusOr<std::shared_ptr<const Compiled>> c = HoistedOf(w);
    return c.ok() ? (*c)->hoisted->workspace_bytes : 0;
  }
  StatusOr<std::unique_ptr<Prepared>> Prepare(const Workload& w, const Config& config,
                                              const Target& target) const override {
    OPSCHED_ASSIGN_OR_RETURN(std::shared_ptr<const Compiled> c, HoistedOf(w));
    OPSCHED_ASSIGN_OR_RETURN(const Chunking k, ChunkingOf(target, config));
    return MakePrepared(c->hoisted->workspace_bytes, [c, k](const PreparedArgs& a) -> Status {
      const int inputs = static_cast<int>(c->inputs.size()), outputs = static_cast<int>(c->outputs.size());
      OPSCHED_ASSIGN_OR_RETURN(
          const TensorPointers main,
          RunFirstPasses(*c->hoisted, a.tensors, inputs, outputs, a.workspace, a.workspace_bytes,
                         "pointwise_cpu_hoisted", [&](size_t, const HoistPass& pass, const TensorPointers& p) {
                           cpu::Interpret(pass.bytecode, pass.accumulator, p, k.threads, k.chunk);
                           return absl::OkStatus();
                         }));
      cpu::Interpret(c->hoisted->bytecode, c->hoisted->accumulator, main, k.threads, k.chunk);
      return absl::OkStatus();
    });
  }
  Status Run(const RunArgs& a) const override { return PrepareAndRun(*this, a); }
};

}  // namespace

Status RegisterCpu(Registry& registry) {
  OPSCHED_RETURN_IF_ERROR(registry.AddImplementation(std::make_unique<PointwiseCpuUnfused>()));
  OPSCHED_RETURN_IF_ERROR(registry.AddImplementation(std::make_unique<PointwiseCpuInterpreted>()));
  OPSCHED_RETURN_IF_ERROR(registry.AddImplementation(std::make_unique<PointwiseCpuHoisted>()));
  return absl::OkStatus();
}

}  // namespace opsched::pointwise
