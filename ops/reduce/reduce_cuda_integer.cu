// The integer reduction (reduce_cuda.h, LaunchInteger): i32/i64 terms accumulated in int64
// (sums wrap around), `group` threads per output striding over its terms, combined in a
// fixed order (deterministic). With split > 1 each of `split` parts of the terms goes to
// an int64 partial [split][M], and LaunchFinish (reduce_cuda_common.cu) combines them in
// order.
#include <algorithm>

#include "ops/reduce/reduce_cuda_common.cuh"

namespace opsched::reduce::gpu_kernels {
namespace {

// Block b, part j = blockIdx.y reduces outputs [b * per_block, (b + 1) * per_block), with
// per_block = blockDim.x / group. kColumns: thread t serves output t % per_block (lane
// t / per_block), so neighbouring threads read neighbouring outputs (coalesced when the
// innermost kept dimension is contiguous); else output t / group (lane t % group), so
// neighbouring threads read neighbouring terms. group is a power of two; above 32 it is
// the whole block (one output per block, rows layout).
template <typename In, typename Out, bool kColumns>
__global__ void IntegerKernel(Problem p, Odometer kept, Odometer reduced, int group, int64_t chunk,
                              int64_t* __restrict__ partial) {
  using S = typename In::Storage;
  const S* __restrict__ x = static_cast<const S*>(p.x);
  const int per_block = blockDim.x / group;
  const int slot = kColumns ? threadIdx.x % per_block : threadIdx.x / group;
  const int lane = kColumns ? threadIdx.x / per_block : threadIdx.x % group;
  const int64_t m = int64_t(blockIdx.x) * per_block + slot;
  const bool active = m < p.outputs;
  const int64_t begin = int64_t(blockIdx.y) * chunk;
  const int64_t end = begin + chunk < p.length ? begin + chunk : p.length;
  int64_t acc = IntegerIdentity(p.op);
  if (active) {
    const int64_t base = kept.Offset(static_cast<uint32_t>(m));
    for (int64_t k = begin + lane; k < end; k += group) {
      acc = Combine(p.op, acc, static_cast<int64_t>(x[base + reduced.Offset(static_cast<uint32_t>(k))]));
    }
  }
  // LaunchFinish's kernel may start; it waits for this grid's writes (the trigger only
  // where there is one: reduce_cuda_rows.cu).
  if (partial != nullptr) gpu::AllowDependentLaunch();
  if constexpr (kColumns) {
    extern __shared__ int64_t lanes[];
    lanes[threadIdx.x] = acc;
    __syncthreads();
    if (lane != 0) return;
    for (int l = 1; l < group; ++l) acc = Combine(p.op, acc, lanes[l * per_block + slot]);
  } else {
    const int width = group < 32 ? group : 32;
    for (int o = width / 2; o > 0; o /= 2) acc = Combine(p.op, acc, gpuShflXor(acc, o, width));
    if (group > 32) {
      __shared__ int64_t warps[32];
      if (threadIdx.x % 32 == 0) warps[threadIdx.x / 32] = acc;
      __syncthreads();
      if (threadIdx.x != 0) return;
      for (int w = 1; w < group / 32; ++w) acc = Combine(p.op, acc, warps[w]);
    } else if (lane != 0) {
      return;
    }
  }
  if (!active) return;
  if (partial != nullptr) {
    partial[int64_t(blockIdx.y) * p.outputs + m] = acc;
  } else {
    static_cast<typename Out::Storage*>(p.y)[m] = Output<Out>(p, acc);
  }
}

}  // namespace

gpuError_t LaunchInteger(const Problem& p, const IntegerConfig& c, void* workspace, gpuStream_t stream) {
  if (p.outputs == 0) return gpuSuccess;
  const bool power_of_two = c.group >= 1 && (c.group & (c.group - 1)) == 0;
  if (!power_of_two || c.group > 1024 || (c.group > 32 && (c.block != c.group || c.columns)) ||
      c.block % c.group != 0 || c.block > 1024 || c.split < 1 || c.split > 65535 ||
      (c.split > 1 && workspace == nullptr)) {
    return gpuErrorInvalidValue;
  }
  const Odometer kept(p.kept_rank, p.kept_shape, p.kept_strides);
  const Odometer reduced(p.reduced_rank, p.reduced_shape, p.reduced_strides);
  const int64_t chunk = CeilDiv(std::max<int64_t>(p.length, 1), c.split);
  const dim3 grid(static_cast<unsigned>(CeilDiv(p.outputs, c.block / c.group)), static_cast<unsigned>(c.split));
  int64_t* partial = c.split > 1 ? static_cast<int64_t*>(workspace) : nullptr;
  auto launch = [&]<typename In, typename Out>() {
    if (c.columns) {
      IntegerKernel<In, Out, true><<<grid, c.block, c.block * sizeof(int64_t), stream>>>(p, kept, reduced, c.group,
                                                                                          chunk, partial);
    } else {
      IntegerKernel<In, Out, false><<<grid, c.block, 0, stream>>>(p, kept, reduced, c.group, chunk, partial);
    }
    gpuError_t e = gpuGetLastError();
    if (e == gpuSuccess && partial != nullptr) e = LaunchFinish(p, partial, c.split, stream);
    return e;
  };
  switch (p.in_type) {
    case ElementType::kI32:
      return p.out_type == ElementType::kI64 ? launch.template operator()<I32, I64>()
                                             : launch.template operator()<I32, I32>();
    case ElementType::kI64:
      return launch.template operator()<I64, I64>();
    default:
      return gpuErrorInvalidValue;
  }
}

}  // namespace opsched::reduce::gpu_kernels
