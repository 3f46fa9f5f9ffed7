// The scatter op's float64 GPU reference: see scatter_cuda_reference.h.
#include <algorithm>
#include <cmath>

#include "core/gpu/verify_device.cuh"
#include "ops/scatter/scatter_cuda_reference.h"

namespace opsched::scatter::gpu_reference {
namespace {

constexpr int kBlock = 256;

int Blocks(int64_t n) {
  return static_cast<int>(std::clamp<int64_t>((n + kBlock - 1) / kBlock, 1, int64_t(1) << 16));
}

#define FOR_EACH(i, n) \
  for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < (n); i += int64_t(gridDim.x) * blockDim.x)

__device__ int64_t Gcd(int64_t a, int64_t b) {
  while (b != 0) {
    const int64_t t = a % b;
    a = b;
    b = t;
  }
  return a;
}

// (a * b) mod m without overflow, for a, b < m.
__device__ int64_t MulMod(int64_t a, int64_t b, int64_t m) {
  if (a < (int64_t(1) << 31) && b < (int64_t(1) << 31)) return (a * b) % m;
  int64_t r = 0;
  a %= m;
  while (b > 0) {
    if (b & 1) r = (r + a) % m;
    a = (a * 2) % m;
    b >>= 1;
  }
  return r;
}

__global__ void GenerateIndicesKernel(gpu::RefTensor indices, int axis, int64_t axis_size, IndexOptions o) {
  const int64_t along = indices.shape[axis];
  int64_t inner = 1;
  for (int d = indices.rank - 1; d > axis; --d) inner *= indices.shape[d];
  FOR_EACH(p, indices.numel) {
    const uint64_t u = static_cast<uint64_t>(p);
    int64_t index = static_cast<int64_t>(gpu::CounterUniform(o.seed, o.id, u) * static_cast<double>(axis_size));
    if (index >= axis_size) index = axis_size - 1;
    if (o.pattern == IndexPattern::kHot && gpu::CounterUniform(o.seed, o.id + 1, u) < 0.9) {
      const int64_t hot = axis_size < 4 ? axis_size : 4;
      index = static_cast<int64_t>(gpu::CounterUniform(o.seed, o.id + 2, u) * static_cast<double>(hot));
      if (index >= hot) index = hot - 1;
    }
    if (o.pattern == IndexPattern::kUnique && along <= axis_size) {
      // Each slice along the axis gets distinct indices: an affine permutation of the
      // axis (multiplier coprime to its size) keyed by the slice.
      const int64_t a = (p / inner) % along;
      const uint64_t slice = static_cast<uint64_t>((p / (inner * along)) * inner + p % inner);
      int64_t mult = static_cast<int64_t>(gpu::CounterBits(o.seed, o.id + 3, slice) % static_cast<uint64_t>(axis_size)) | 1;
      while (Gcd(mult, axis_size) != 1) mult = (mult + 1) % axis_size == 0 ? 1 : mult + 1;
      const int64_t offset = static_cast<int64_t>(gpu::CounterBits(o.seed, o.id + 4, slice) % static_cast<uint64_t>(axis_size));
      index = (MulMod(mult, a, axis_size) + offset) % axis_size;
    }
    if (o.negative_fraction > 0 && gpu::CounterUniform(o.seed, o.id + 5, u) < o.negative_fraction) index -= axis_size;
    const int64_t at = gpu::RefOffset(indices, p);
    if (indices.type == gpu::kRefI64) {
      static_cast<int64_t*>(indices.data)[at] = index;
    } else {
      static_cast<int32_t*>(indices.data)[at] = static_cast<int32_t>(index);
    }
  }
}

// The row-major target in data of position p of indices, or -1 when its index is out
// of range.
__device__ int64_t TargetOf(const Problem& pr, int64_t p) {
  const int64_t raw = gpu::RefLoadIntAt(pr.indices, gpu::RefOffset(pr.indices, p));
  const int64_t axis_size = pr.data.shape[pr.axis];
  if (raw < -axis_size || raw >= axis_size) return -1;
  const int64_t index = raw < 0 ? raw + axis_size : raw;
  int64_t coord[gpu::kRefMaxRank];
  int64_t rest = p;
  for (int d = pr.indices.rank - 1; d >= 0; --d) {
    coord[d] = rest % pr.indices.shape[d];
    rest /= pr.indices.shape[d];
  }
  coord[pr.axis] = index;
  int64_t t = 0;
  for (int d = 0; d < pr.data.rank; ++d) t = t * pr.data.shape[d] + coord[d];
  return t;
}

__device__ double Nan() { return __longlong_as_double(0x7ff8000000000000ll); }

__global__ void InitKernel(Problem pr, State s) {
  FOR_EACH(t, pr.data.numel) {
    const double v = gpu::RefLoad(pr.data, t);
    s.ref[t] = v;
    s.magnitude[t] = fabs(v);
    s.count[t] = 0;
    if (s.winner != nullptr) s.winner[t] = 0;
  }
}

__global__ void AccumulateKernel(Problem pr, State s) {
  FOR_EACH(p, pr.indices.numel) {
    const int64_t t = TargetOf(pr, p);
    if (t < 0) {
      atomicMin(s.bad, static_cast<unsigned long long>(p));
      continue;
    }
    const double v = gpu::RefLoad(pr.updates, p);
    atomicAdd(&s.count[t], 1);
    gpu::AtomicAddDouble(&s.magnitude[t], fabs(v));
    switch (pr.reduction) {
      case Reduction::kNone:
        atomicMax(&s.winner[t], static_cast<unsigned long long>(p) + 1);
        break;
      case Reduction::kAdd:
        gpu::AtomicAddDouble(&s.ref[t], v);
        break;
      case Reduction::kMul:
        if (pr.data.type == gpu::kRefI32 || pr.data.type == gpu::kRefI64) {
          // Integers wrap around at their width, as the kernels' products do; with the
          // generator's factors (powers of two, data below 2^7) every value stays exact.
          const bool narrow = pr.data.type == gpu::kRefI32;
          gpu::AtomicApplyDouble(&s.ref[t], v, [narrow](double a, double b) {
            const uint64_t product = static_cast<uint64_t>(static_cast<int64_t>(a)) *
                                     static_cast<uint64_t>(static_cast<int64_t>(b));
            return narrow ? static_cast<double>(static_cast<int32_t>(static_cast<uint32_t>(product)))
                          : static_cast<double>(static_cast<int64_t>(product));
          });
        } else {
          gpu::AtomicApplyDouble(&s.ref[t], v, [](double a, double b) { return a * b; });
        }
        break;
      case Reduction::kMin:
        gpu::AtomicApplyDouble(&s.ref[t], v, [](double a, double b) {
          return gpu::RefIsNan(a) || gpu::RefIsNan(b) ? Nan() : (b < a ? b : a);
        });
        break;
      case Reduction::kMax:
        gpu::AtomicApplyDouble(&s.ref[t], v, [](double a, double b) {
          return gpu::RefIsNan(a) || gpu::RefIsNan(b) ? Nan() : (b > a ? b : a);
        });
        break;
    }
  }
}

__global__ void FinishNoneKernel(Problem pr, State s) {
  FOR_EACH(t, pr.data.numel) {
    const unsigned long long w = s.winner[t];
    if (w > 0) s.ref[t] = gpu::RefLoad(pr.updates, static_cast<int64_t>(w - 1));
  }
}

__global__ void MatchKernel(Problem pr, gpu::RefTensor out, State s) {
  FOR_EACH(p, pr.indices.numel) {
    const int64_t t = TargetOf(pr, p);
    if (t >= 0 && gpu::RefLoad(out, t) == gpu::RefLoad(pr.updates, p)) s.matched[t] = 1;
  }
}

__device__ double Gamma(const Tolerance& tol, int64_t count) {
  const double k = static_cast<double>(count) + 1;
  const double g = k * tol.unit_roundoff / fmax(1e-300, 1 - k * tol.unit_roundoff);
  return g < 1.0 ? g : 1.0;
}

__global__ void CheckKernel(Problem pr, gpu::RefTensor out, State s, Tolerance tol, bool deterministic,
                            CheckResult* result) {
  FOR_EACH(t, pr.data.numel) {
    const double got = gpu::RefLoad(out, t);
    const double want = s.ref[t];
    const int32_t count = s.count[t];
    bool ok;
    if (pr.reduction == Reduction::kNone && count > 0 && !deterministic) {
      ok = s.matched[t] != 0;
    } else if (tol.integer || pr.reduction == Reduction::kNone || pr.reduction == Reduction::kMin ||
               pr.reduction == Reduction::kMax || count == 0) {
      ok = got == want || (gpu::RefIsNan(got) && gpu::RefIsNan(want));
    } else if (pr.reduction == Reduction::kAdd) {
      ok = fabs(got - want) <= Gamma(tol, count) * s.magnitude[t] + tol.unit_roundoff * fabs(want);
    } else {
      ok = fabs(got - want) <= (Gamma(tol, count) + tol.unit_roundoff) * fabs(want) + tol.smallest_normal;
    }
    if (!ok) {
      atomicAdd(&result->count, 1ull);
      atomicMin(&result->first, static_cast<unsigned long long>(t));
    }
  }
}

}  // namespace

gpuError_t LaunchGenerateIndices(const gpu::RefTensor& indices, int axis, int64_t axis_size,
                                 const IndexOptions& options, gpuStream_t stream) {
  if (indices.numel == 0 || axis_size <= 0) return gpuSuccess;
  GenerateIndicesKernel<<<Blocks(indices.numel), kBlock, 0, stream>>>(indices, axis, axis_size, options);
  return gpuGetLastError();
}

gpuError_t LaunchReference(const Problem& pr, const State& s, gpuStream_t stream) {
  if (pr.data.numel > 0) InitKernel<<<Blocks(pr.data.numel), kBlock, 0, stream>>>(pr, s);
  if (pr.indices.numel > 0) AccumulateKernel<<<Blocks(pr.indices.numel), kBlock, 0, stream>>>(pr, s);
  if (pr.reduction == Reduction::kNone && pr.data.numel > 0) {
    FinishNoneKernel<<<Blocks(pr.data.numel), kBlock, 0, stream>>>(pr, s);
  }
  return gpuGetLastError();
}

gpuError_t LaunchCheck(const Problem& pr, const gpu::RefTensor& out, const State& s, const Tolerance& tol,
                       bool deterministic, CheckResult* result, gpuStream_t stream) {
  if (pr.data.numel == 0) return gpuSuccess;
  if (pr.reduction == Reduction::kNone && !deterministic) {
    gpuError_t err = gpuMemsetAsync(s.matched, 0, sizeof(int32_t) * pr.data.numel, stream);
    if (err != gpuSuccess) return err;
    if (pr.indices.numel > 0) MatchKernel<<<Blocks(pr.indices.numel), kBlock, 0, stream>>>(pr, out, s);
  }
  CheckKernel<<<Blocks(pr.data.numel), kBlock, 0, stream>>>(pr, out, s, tol, deterministic, result);
  return gpuGetLastError();
}

double AddBound(const Tolerance& tol, int64_t count, double magnitude, double want) {
  const double k = static_cast<double>(count) + 1;
  const double g = std::min(1.0, k * tol.unit_roundoff / std::max(1e-300, 1 - k * tol.unit_roundoff));
  return g * magnitude + tol.unit_roundoff * std::abs(want);
}

double MulBound(const Tolerance& tol, int64_t count, double want) {
  const double k = static_cast<double>(count) + 1;
  const double g = std::min(1.0, k * tol.unit_roundoff / std::max(1e-300, 1 - k * tol.unit_roundoff));
  return (g + tol.unit_roundoff) * std::abs(want) + tol.smallest_normal;
}

}  // namespace opsched::scatter::gpu_reference
