// Kernels of core/gpu/verify.h: the counter-based generator, tensor copies and
// fingerprints, and the float64 comparison. One thread per element, grid-stride loops.
#include <algorithm>

#include "core/buffer.h"
#include "core/gpu/gpu_backend.h"
#include "core/gpu/verify.h"
#include "core/gpu/verify_device.cuh"

namespace opsched::gpu {
namespace {

constexpr int kBlock = 256;

int Blocks(int64_t n) {
  return static_cast<int>(std::clamp<int64_t>((n + kBlock - 1) / kBlock, 1, int64_t(1) << 16));
}

__device__ void StoreAt(const RefTensor& t, int64_t offset, double v) {
  switch (t.type) {
    case kRefF16:
      static_cast<uint16_t*>(t.data)[offset] = FloatToHalf(static_cast<float>(v));
      break;
    case kRefBF16:
      static_cast<uint16_t*>(t.data)[offset] = FloatToBf16(static_cast<float>(v));
      break;
    case kRefI32:
      static_cast<int32_t*>(t.data)[offset] = static_cast<int32_t>(v);
      break;
    case kRefI64:
      static_cast<int64_t*>(t.data)[offset] = static_cast<int64_t>(v);
      break;
    default:
      static_cast<float*>(t.data)[offset] = static_cast<float>(v);
  }
}

__global__ void FillKernel(RefTensor t, uint64_t seed, uint64_t id, FillOptions o) {
  const bool integer = t.type == kRefI32 || t.type == kRefI64;
  for (int64_t e = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; e < t.numel; e += int64_t(gridDim.x) * blockDim.x) {
    const double u = CounterUniform(seed, id, static_cast<uint64_t>(e));
    double v;
    if (integer) {
      v = floor(o.lo + u * (o.hi - o.lo + 1));
      if (v > o.hi) v = o.hi;
    } else {
      v = o.lo + u * (o.hi - o.lo);
      if (o.special_fraction > 0) {
        const double s = CounterUniform(seed, id ^ 0x5bd1e995ull, static_cast<uint64_t>(e));
        if (s < o.special_fraction) {
          const int which = static_cast<int>(3 * s / o.special_fraction);
          v = which == 0 ? __longlong_as_double(0x7ff8000000000000ll) : which == 1 ? __longlong_as_double(0x7ff0000000000000ll)
                                                                                  : -__longlong_as_double(0x7ff0000000000000ll);
        }
      }
    }
    StoreAt(t, RefOffset(t, e), v);
  }
}

__device__ uint64_t ElementBits(const RefTensor& t, int64_t offset) {
  switch (t.type) {
    case kRefF16:
    case kRefBF16:
      return static_cast<const uint16_t*>(t.data)[offset];
    case kRefI64:
      return static_cast<const uint64_t*>(t.data)[offset];
    default:
      return static_cast<const uint32_t*>(t.data)[offset];
  }
}

__global__ void CopyKernel(RefTensor src, RefTensor dst) {
  for (int64_t e = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; e < src.numel; e += int64_t(gridDim.x) * blockDim.x) {
    const int64_t from = RefOffset(src, e), to = RefOffset(dst, e);
    switch (src.type) {
      case kRefF16:
      case kRefBF16:
        static_cast<uint16_t*>(dst.data)[to] = static_cast<const uint16_t*>(src.data)[from];
        break;
      case kRefI64:
        static_cast<uint64_t*>(dst.data)[to] = static_cast<const uint64_t*>(src.data)[from];
        break;
      default:
        static_cast<uint32_t*>(dst.data)[to] = static_cast<const uint32_t*>(src.data)[from];
    }
  }
}

__global__ void FingerprintKernel(RefTensor t, unsigned long long* hash) {
  unsigned long long h = 0;
  for (int64_t e = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; e < t.numel; e += int64_t(gridDim.x) * blockDim.x) {
    h += Mix64(ElementBits(t, RefOffset(t, e)) ^ Mix64(static_cast<uint64_t>(e)));
  }
  atomicAdd(hash, h);
}

struct CompareResult {
  unsigned long long count;
  unsigned long long first;
};

__global__ void CompareKernel(RefTensor out, const double* want, const double* magnitude, double max_magnitude,
                              CloseBound bound, CompareResult* result) {
  for (int64_t e = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; e < out.numel; e += int64_t(gridDim.x) * blockDim.x) {
    const double m = magnitude == nullptr ? 0.0 : magnitude[e];
    if (!bound.Holds(RefLoad(out, e), want[e], m, max_magnitude)) {
      atomicAdd(&result->count, 1ull);
      atomicMin(&result->first, static_cast<unsigned long long>(e));
    }
  }
}

__global__ void MaxKernel(const double* values, int64_t n, double* result) {
  double m = 0;
  for (int64_t e = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; e < n; e += int64_t(gridDim.x) * blockDim.x) {
    m = fmax(m, values[e]);
  }
  AtomicMaxNonNegative(result, m);
}

Status Launched(std::string_view what) { return LastLaunchError(what); }

gpuStream_t Native(void* stream) { return static_cast<gpuStream_t>(stream); }

}  // namespace

Status Fill(const Tensor& t, uint64_t seed, uint64_t id, const FillOptions& options, void* stream) {
  if (t.desc.numel() == 0) return absl::OkStatus();
  const RefTensor r = ToRef(t);
  FillKernel<<<Blocks(r.numel), kBlock, 0, Native(stream)>>>(r, seed, id, options);
  return Launched("verify fill");
}

Status CopyTensor(const Tensor& src, const Tensor& dst, void* stream) {
  if (src.desc.numel() == 0) return absl::OkStatus();
  const RefTensor s = ToRef(src), d = ToRef(dst);
  CopyKernel<<<Blocks(s.numel), kBlock, 0, Native(stream)>>>(s, d);
  return Launched("verify copy");
}

StatusOr<uint64_t> Fingerprint(const Tensor& t, void* stream) {
  OPSCHED_ASSIGN_OR_RETURN(Buffer scratch, Buffer::Allocate(t.device, sizeof(unsigned long long)));
  auto* hash = static_cast<unsigned long long*>(scratch.data());
  OPSCHED_RETURN_IF_ERROR(MemsetAsync(hash, 0, sizeof *hash, stream));
  if (t.desc.numel() > 0) {
    const RefTensor r = ToRef(t);
    FingerprintKernel<<<Blocks(r.numel), kBlock, 0, Native(stream)>>>(r, hash);
    OPSCHED_RETURN_IF_ERROR(Launched("verify fingerprint"));
  }
  unsigned long long host = 0;
  OPSCHED_RETURN_IF_ERROR(MemcpyAsync(&host, hash, sizeof host, stream));
  OPSCHED_RETURN_IF_ERROR(StreamSynchronize(stream));
  return static_cast<uint64_t>(host) ^ static_cast<uint64_t>(t.desc.numel());
}

StatusOr<double> ReadElement(const Tensor& t, int64_t index, void* stream) {
  const RefTensor r = ToRef(t);
  int64_t offset = 0, e = index;
  for (int d = r.rank - 1; d >= 0; --d) {
    offset += (e % r.shape[d]) * r.strides[d];
    e /= r.shape[d];
  }
  const size_t size = DTypeSize(t.desc.dtype());
  uint64_t bits = 0;
  OPSCHED_RETURN_IF_ERROR(MemcpyAsync(&bits, static_cast<const char*>(t.data) + offset * size, size, stream));
  OPSCHED_RETURN_IF_ERROR(StreamSynchronize(stream));
  switch (r.type) {
    case kRefF16:
      return HalfToFloat(static_cast<uint16_t>(bits));
    case kRefBF16:
      return Bf16ToFloat(static_cast<uint16_t>(bits));
    case kRefI32:
      return static_cast<double>(static_cast<int32_t>(bits));
    case kRefI64:
      return static_cast<double>(static_cast<int64_t>(bits));
    default:
      return BitsFloat(static_cast<uint32_t>(bits));
  }
}

Status ReadDoubles(const double* device, int64_t n, double* host, void* stream) {
  if (n <= 0) return absl::OkStatus();
  OPSCHED_RETURN_IF_ERROR(MemcpyAsync(host, device, static_cast<size_t>(n) * sizeof(double), stream));
  return StreamSynchronize(stream);
}

StatusOr<Mismatch> CompareClose(const Tensor& out, const double* want, const double* magnitude, double max_magnitude,
                                const CloseBound& bound, void* stream) {
  Mismatch m;
  if (out.desc.numel() == 0) return m;
  OPSCHED_ASSIGN_OR_RETURN(Buffer scratch, Buffer::Allocate(out.device, sizeof(CompareResult)));
  auto* result = static_cast<CompareResult*>(scratch.data());
  const CompareResult init{0, ~0ull};
  OPSCHED_RETURN_IF_ERROR(MemcpyAsync(result, &init, sizeof init, stream));
  const RefTensor r = ToRef(out);
  CompareKernel<<<Blocks(r.numel), kBlock, 0, Native(stream)>>>(r, want, magnitude, max_magnitude, bound, result);
  OPSCHED_RETURN_IF_ERROR(Launched("verify compare"));
  CompareResult host{};
  OPSCHED_RETURN_IF_ERROR(MemcpyAsync(&host, result, sizeof host, stream));
  OPSCHED_RETURN_IF_ERROR(StreamSynchronize(stream));
  m.count = static_cast<int64_t>(host.count);
  if (m.count == 0) return m;
  m.first = static_cast<int64_t>(host.first);
  OPSCHED_ASSIGN_OR_RETURN(m.got, ReadElement(out, m.first, stream));
  OPSCHED_RETURN_IF_ERROR(ReadDoubles(want + m.first, 1, &m.want, stream));
  if (magnitude != nullptr) OPSCHED_RETURN_IF_ERROR(ReadDoubles(magnitude + m.first, 1, &m.magnitude, stream));
  return m;
}

StatusOr<double> MaxNonNegative(const Device& device, const double* values, int64_t n, void* stream) {
  if (n <= 0) return 0.0;
  OPSCHED_ASSIGN_OR_RETURN(Buffer scratch, Buffer::Allocate(device, sizeof(double)));
  auto* result = static_cast<double*>(scratch.data());
  OPSCHED_RETURN_IF_ERROR(MemsetAsync(result, 0, sizeof(double), stream));
  MaxKernel<<<Blocks(n), kBlock, 0, Native(stream)>>>(values, n, result);
  OPSCHED_RETURN_IF_ERROR(Launched("verify max"));
  double host = 0;
  OPSCHED_RETURN_IF_ERROR(MemcpyAsync(&host, result, sizeof host, stream));
  OPSCHED_RETURN_IF_ERROR(StreamSynchronize(stream));
  return host;
}

}  // namespace opsched::gpu
