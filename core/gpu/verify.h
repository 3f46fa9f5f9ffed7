// Device-side verification primitives shared by every op's float64 GPU reference
// (the tuner's check of a candidate without moving workload-sized data over PCIe):
//   - a counter-based generator: element e of tensor `id` under `seed` gets
//     Uniform(seed, id, e), a hash of the three (splitmix64), so inputs are made on the
//     device, identical for a given seed whatever the launch shape;
//   - an order-sensitive fingerprint of a tensor's storage (inputs must not change);
//   - an elementwise comparison of an output with a float64 reference under a
//     CloseBound, counting mismatches and naming the first one.
// Kernels live in verify_kernels.cu (nvcc or hipcc); callers are GPU-only code.
#pragma once

#include <cstdint>

#include "core/close_bound.h"
#include "core/half.h"
#include "core/status.h"
#include "core/tensor.h"

namespace opsched::gpu {

inline constexpr int kRefMaxRank = 8;

// Dtype codes as core/dtype.h numbers them (f32, f16, bf16, i32, i64).
enum RefType : int32_t { kRefF32 = 0, kRefF16 = 1, kRefBF16 = 2, kRefI32 = 3, kRefI64 = 4 };

// A tensor as reference kernels see it: dtype, shape and element strides (passed to
// kernels by value).
struct RefTensor {
  int32_t type = kRefF32;
  int32_t rank = 0;
  int64_t shape[kRefMaxRank] = {};
  int64_t strides[kRefMaxRank] = {};
  int64_t numel = 0;
  void* data = nullptr;
};

inline RefTensor ToRef(const Tensor& t) {
  RefTensor r;
  r.type = static_cast<int32_t>(t.desc.dtype());
  r.rank = t.desc.rank();
  for (int d = 0; d < r.rank; ++d) {
    r.shape[d] = t.desc.dim(d);
    r.strides[d] = t.desc.stride(d);
  }
  r.numel = t.desc.numel();
  r.data = t.data;
  return r;
}

// The outcome of a device comparison: how many elements failed and the first one
// (row-major), with its values read back.
struct Mismatch {
  int64_t count = 0;
  int64_t first = -1;
  double got = 0;
  double want = 0;
  double magnitude = 0;
};

// Values of Fill: reals uniform in [lo, hi); integer tensors uniform in [lo, hi].
struct FillOptions {
  double lo = -1.0;
  double hi = 1.0;
  // Fraction of floating-point elements replaced by NaN, +Inf or -Inf in equal parts.
  double special_fraction = 0.0;
};

// The generator's raw 64 bits and a double in [0, 1) for (seed, stream, index); the same
// on host and device, so tests can predict values.
OPSCHED_HD inline uint64_t Mix64(uint64_t z) {
  z += 0x9e3779b97f4a7c15ull;
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}
OPSCHED_HD inline uint64_t CounterBits(uint64_t seed, uint64_t stream, uint64_t index) {
  return Mix64(Mix64(Mix64(seed) ^ stream) ^ index);
}
OPSCHED_HD inline double CounterUniform(uint64_t seed, uint64_t stream, uint64_t index) {
  return static_cast<double>(CounterBits(seed, stream, index) >> 11) * 0x1.0p-53;
}

// Fills every element of `t` (any dtype, any strides) with draws of stream `id`.
Status Fill(const Tensor& t, uint64_t seed, uint64_t id, const FillOptions& options, void* stream);
// Copies `src` into `dst` (same descriptor), element by element through the strides.
Status CopyTensor(const Tensor& src, const Tensor& dst, void* stream);
// An order-sensitive 64-bit hash of the bytes the tensor's elements occupy (waits).
StatusOr<uint64_t> Fingerprint(const Tensor& t, void* stream);
// Compares `out` (contiguous) with `want` (row-major float64, out.numel() values);
// `magnitude` may be null (then 0). Waits for the result.
StatusOr<Mismatch> CompareClose(const Tensor& out, const double* want, const double* magnitude,
                                double max_magnitude, const CloseBound& bound, void* stream);
// The largest of n doubles >= 0 (0 when n is 0). Waits.
StatusOr<double> MaxNonNegative(const Device& device, const double* values, int64_t n, void* stream);
// Reads an output element as a double (waits): for mismatch messages.
StatusOr<double> ReadElement(const Tensor& t, int64_t row_major_index, void* stream);
// Reads doubles back (waits).
Status ReadDoubles(const double* device, int64_t n, double* host, void* stream);

}  // namespace opsched::gpu
