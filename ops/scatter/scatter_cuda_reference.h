// The scatter op's float64 reference on the GPU (registry/device_verification.h):
// index generation, the reference itself and the comparison, as plain launchers. The
// reference mirrors ScatterOp::Reference and ScatterOp::Check (scatter_def.cc): the
// same targets, the same "last update in row-major order wins" for reduction none and
// the same per-target tolerances; it is per update (atomics in double), since a thread
// per output would scan every update.
#pragma once

#include <cstdint>

#include "core/gpu/portability.h"
#include "core/gpu/verify.h"
#include "ops/scatter/scatter_params.h"

namespace opsched::scatter::gpu_reference {

enum class IndexPattern : int32_t { kUniform = 0, kUnique = 1, kHot = 2 };

struct IndexOptions {
  IndexPattern pattern = IndexPattern::kUniform;
  double negative_fraction = 0;
  uint64_t seed = 0;
  uint64_t id = 0;
};

// Fills `indices` (i32 or i64, any strides) with indices into an axis of `axis_size`.
gpuError_t LaunchGenerateIndices(const gpu::RefTensor& indices, int axis, int64_t axis_size,
                                 const IndexOptions& options, gpuStream_t stream);

// Per target of data (row-major over data's shape): the reference, how many updates hit
// it, and the sum of the magnitudes involved; for reduction none the winning position+1.
struct State {
  double* ref = nullptr;
  double* magnitude = nullptr;
  int32_t* count = nullptr;
  unsigned long long* winner = nullptr;   // reduction none
  int32_t* matched = nullptr;             // reduction none, non-deterministic check
  unsigned long long* bad = nullptr;      // smallest out-of-range position (~0: none)
};

struct Problem {
  gpu::RefTensor data, indices, updates;
  int axis = 0;
  Reduction reduction = Reduction::kNone;
};

// Computes State (which must be allocated for data.numel targets, bad set to ~0).
gpuError_t LaunchReference(const Problem& problem, const State& state, gpuStream_t stream);

// Tolerances of ScatterOp::Check for the output dtype.
struct Tolerance {
  double unit_roundoff = 0;
  double smallest_normal = 0;
  bool integer = false;  // exact
};

struct CheckResult {
  unsigned long long count;
  unsigned long long first;
};

// Compares `out` with State; `result` must start as {0, ~0}.
gpuError_t LaunchCheck(const Problem& problem, const gpu::RefTensor& out, const State& state,
                       const Tolerance& tolerance, bool deterministic, CheckResult* result,
                       gpuStream_t stream);

// The tolerance of target t (what the check allowed), for messages: host side.
double AddBound(const Tolerance& tolerance, int64_t count, double magnitude, double want);
double MulBound(const Tolerance& tolerance, int64_t count, double want);

}  // namespace opsched::scatter::gpu_reference
