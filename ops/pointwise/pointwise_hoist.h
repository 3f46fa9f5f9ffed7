// Hoisting: a subexpression that varies over fewer dimensions than the outputs (a
// per-column scale rsqrt(g*g+1e-5), a per-channel gate sigmoid(s)) is computed once per
// element of its own shape by a first pass into f32 workspace, and the main program reads
// it back broadcast, instead of computing it again for every output element. The
// compiler's loop-invariant code motion, done once per program at compile time.
//
//   out=max(0,min(6,0.5*rsqrt(g*g+1e-5)*(x-b)+b))   x [4096,4096], b and g [4096]
//   pass over [1,4096]:  $h0 = 0.5*rsqrt(g*g+1e-5)
//   main over [4096,4096]: out = max(0,min(6,$h0*(x-b)+b))
//
// A subexpression is hoisted when it has at least one operation, varies over some of the
// outputs' dimensions but not all (not over none: a constant), and each of its values is
// reused at least kMinHoistReuse times; the largest such subexpressions are taken.
// Hoisted values with the same dimensions share one pass. Each is the f32 value the
// unhoisted program computes (the same operations on the same operands, loads converted
// to f32 alike), so both forms give bit-identical outputs.
#pragma once

#include <cstddef>
#include <optional>
#include <string_view>
#include <vector>

#include "absl/types/span.h"
#include "core/format.h"
#include "core/status.h"
#include "core/tensor.h"
#include "core/tensor_desc.h"
#include "ops/pointwise/pointwise_accumulator.h"
#include "ops/pointwise/pointwise_bytecode.h"
#include "ops/pointwise/pointwise_expr.h"

namespace opsched::pointwise {

inline constexpr int64_t kMinHoistReuse = 8;

// One first pass: its bytecode runs over the hoisted values' own shape (the outputs'
// shape with 1 in the dimensions they do not vary over).
struct HoistPass {
  Bytecode bytecode;
  AccCode accumulator;
  std::vector<int> inputs;  // per bytecode input, the workload input it reads
  std::vector<int> values;  // per bytecode output, the hoisted value it writes
};

struct Hoisted {
  std::vector<HoistPass> passes;
  std::vector<size_t> offsets;  // per hoisted value, its byte offset in the workspace (16-byte aligned)
  size_t workspace_bytes = 0;
  // The main program: the workload's inputs, then the hoisted values (f32), then its
  // outputs.
  Program program;
  Bytecode bytecode;
  AccCode accumulator;
  int ops_hoisted = 0;  // operations the hoisted values hold (no longer computed per output element)
};

// The hoisted form of `p` over its tensors (as for Compile), or nullopt where nothing is
// worth hoisting or the hoisted form would not fit the bytecode's limits.
std::optional<Hoisted> Hoist(const Program& p, const std::vector<TensorDesc>& inputs,
                             const std::vector<TensorDesc>& outputs);

// The tensors of pass `k` and of the main program, from the workload's tensors (inputs
// then outputs, as Run gets them) and the workspace.
TensorPointers PassPointers(const Hoisted& h, size_t k, const void* const* tensors, void* workspace);
TensorPointers MainPointers(const Hoisted& h, int num_inputs, int num_outputs, const void* const* tensors,
                            void* workspace);

// What every implementation of a hoisted form does before its main program: checks that
// the workspace holds the hoisted values (an internal error naming `who` otherwise), runs
// each first pass through run_pass(k, pass, its pointers) in order (the first error stops
// them) and gives the main program's pointers. `tensors`: Run's, inputs then outputs.
template <typename RunPass>
StatusOr<TensorPointers> RunFirstPasses(const Hoisted& h, absl::Span<const Tensor> tensors, int num_inputs,
                                        int num_outputs, void* workspace, size_t workspace_bytes, std::string_view who,
                                        RunPass&& run_pass) {
  if (workspace_bytes < h.workspace_bytes) return absl::InternalError(fmt::format("{}: workspace too small", who));
  const void* pointers[kMaxTensors] = {};
  for (size_t t = 0; t < tensors.size() && t < kMaxTensors; ++t) pointers[t] = tensors[t].data;
  for (size_t k = 0; k < h.passes.size(); ++k) {
    OPSCHED_RETURN_IF_ERROR(run_pass(k, h.passes[k], PassPointers(h, k, pointers, workspace)));
  }
  return MainPointers(h, num_inputs, num_outputs, pointers, workspace);
}

}  // namespace opsched::pointwise
