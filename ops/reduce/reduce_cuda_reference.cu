// The reduce op's float64 GPU reference: see reduce_cuda_reference.h.
#include <algorithm>

#include "core/gpu/verify_device.cuh"
#include "ops/reduce/reduce_cuda_reference.h"

namespace opsched::reduce::gpu_reference {
namespace {

constexpr int kBlock = 256;
// Outputs with more terms than this are split over blocks of this many terms.
constexpr int64_t kChunk = 1 << 16;

__device__ double Nan() { return __longlong_as_double(0x7ff8000000000000ll); }
__device__ double Inf() { return __longlong_as_double(0x7ff0000000000000ll); }

__device__ double Init(ReduceOp op) { return op == ReduceOp::kMax ? -Inf() : op == ReduceOp::kMin ? Inf() : 0.0; }

__device__ double Combine(ReduceOp op, double acc, double v) {
  switch (op) {
    case ReduceOp::kMax:
      return gpu::RefIsNan(acc) || gpu::RefIsNan(v) ? Nan() : (v > acc ? v : acc);
    case ReduceOp::kMin:
      return gpu::RefIsNan(acc) || gpu::RefIsNan(v) ? Nan() : (v < acc ? v : acc);
    default:
      return acc + v;  // sum, mean (terms already squared for sumsq)
  }
}

// Element offsets in x of output i's first term, and of term j relative to it.
__device__ int64_t KeptOffset(const Problem& pr, int64_t i) {
  int64_t offset = 0;
  for (int d = pr.x.rank - 1; d >= 0; --d) {
    if (pr.mask & (1u << d)) continue;
    offset += (i % pr.x.shape[d]) * pr.x.strides[d];
    i /= pr.x.shape[d];
  }
  return offset;
}
__device__ int64_t ReducedOffset(const Problem& pr, int64_t j) {
  int64_t offset = 0;
  for (int d = pr.x.rank - 1; d >= 0; --d) {
    if (!(pr.mask & (1u << d))) continue;
    offset += (j % pr.x.shape[d]) * pr.x.strides[d];
    j /= pr.x.shape[d];
  }
  return offset;
}

__device__ void Term(const Problem& pr, int64_t base, int64_t j, double* acc, double* mag) {
  double v = gpu::RefLoadAt(pr.x, base + ReducedOffset(pr, j));
  if (pr.op == ReduceOp::kSumSquares) v = v * v;
  *acc = Combine(pr.op, *acc, v);
  *mag += pr.op == ReduceOp::kSumSquares ? v : fabs(v);
}

__device__ double Finish(const Problem& pr, double acc) {
  if (pr.op == ReduceOp::kMean) return pr.terms == 0 ? Nan() : acc / static_cast<double>(pr.terms);
  return acc;
}

// One thread per output, every term in order.
__global__ void PerOutputKernel(Problem pr, double* ref, double* magnitude) {
  for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < pr.outputs; i += int64_t(gridDim.x) * blockDim.x) {
    const int64_t base = KeptOffset(pr, i);
    double acc = Init(pr.op), mag = 0;
    for (int64_t j = 0; j < pr.terms; ++j) Term(pr, base, j, &acc, &mag);
    ref[i] = Finish(pr, acc);
    magnitude[i] = mag;
  }
}

__global__ void InitKernel(Problem pr, double* ref, double* magnitude) {
  for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < pr.outputs; i += int64_t(gridDim.x) * blockDim.x) {
    ref[i] = Init(pr.op);
    magnitude[i] = 0;
  }
}

// Block (chunk, output): its threads share the chunk's terms, sum them in shared memory,
// and one thread combines the result into the output atomically.
__global__ void ChunkKernel(Problem pr, double* ref, double* magnitude) {
  __shared__ double accs[kBlock], mags[kBlock];
  const int64_t i = blockIdx.y;
  const int64_t begin = static_cast<int64_t>(blockIdx.x) * kChunk;
  const int64_t end = min(begin + kChunk, pr.terms);
  const int64_t base = KeptOffset(pr, i);
  double acc = Init(pr.op), mag = 0;
  for (int64_t j = begin + threadIdx.x; j < end; j += blockDim.x) Term(pr, base, j, &acc, &mag);
  accs[threadIdx.x] = acc;
  mags[threadIdx.x] = mag;
  __syncthreads();
  for (int half = blockDim.x / 2; half > 0; half /= 2) {
    if (threadIdx.x < half) {
      accs[threadIdx.x] = Combine(pr.op, accs[threadIdx.x], accs[threadIdx.x + half]);
      mags[threadIdx.x] += mags[threadIdx.x + half];
    }
    __syncthreads();
  }
  if (threadIdx.x == 0) {
    const ReduceOp op = pr.op;
    gpu::AtomicApplyDouble(&ref[i], accs[0], [op](double a, double b) { return Combine(op, a, b); });
    gpu::AtomicAddDouble(&magnitude[i], mags[0]);
  }
}

__global__ void FinishKernel(Problem pr, double* ref) {
  for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < pr.outputs; i += int64_t(gridDim.x) * blockDim.x) {
    ref[i] = Finish(pr, ref[i]);
  }
}

int Blocks(int64_t n) {
  return static_cast<int>(std::clamp<int64_t>((n + kBlock - 1) / kBlock, 1, int64_t(1) << 16));
}

}  // namespace

gpuError_t LaunchReference(const Problem& pr, double* ref, double* magnitude, gpuStream_t stream) {
  if (pr.outputs == 0) return gpuSuccess;
  const int64_t chunks = (pr.terms + kChunk - 1) / kChunk;
  if (chunks <= 1 || pr.outputs > 65535) {
    PerOutputKernel<<<Blocks(pr.outputs), kBlock, 0, stream>>>(pr, ref, magnitude);
    return gpuGetLastError();
  }
  InitKernel<<<Blocks(pr.outputs), kBlock, 0, stream>>>(pr, ref, magnitude);
  ChunkKernel<<<dim3(static_cast<unsigned>(chunks), static_cast<unsigned>(pr.outputs)), kBlock, 0, stream>>>(
      pr, ref, magnitude);
  FinishKernel<<<Blocks(pr.outputs), kBlock, 0, stream>>>(pr, ref);
  return gpuGetLastError();
}

}  // namespace opsched::reduce::gpu_reference
