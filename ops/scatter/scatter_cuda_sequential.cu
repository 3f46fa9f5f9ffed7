// The sequential scatter: one block checks the indices (and copies data into out), then
// one thread applies every update in row-major order.
#include "ops/scatter/scatter_cuda_common.cuh"

namespace opsched::scatter::gpu_kernels {
namespace {

template <typename T, typename I>
__global__ void SequentialKernel(Params p, bool copy, ErrorSlot slot) {
  using S = typename T::Storage;
  __shared__ Word bad;
  if (threadIdx.x == 0) bad = 0;
  __syncthreads();
  CheckGrid<I, false>(p, Geometry(), threadIdx.x, blockDim.x, &bad);
  if (copy) CopyGrid<T>(p, 1, threadIdx.x, blockDim.x);
  __syncthreads();
  if (threadIdx.x != 0) return;
  if (bad != 0) {
    ReportBad<I>(p, bad, slot);
    return;
  }
  const I* indices = static_cast<const I*>(p.indices);
  const S* updates = static_cast<const S*>(p.updates);
  S* out = static_cast<S*>(p.out);
  for (int64_t pos = 0; pos < p.n; ++pos) {
    const Location l = Locate<false>(p, Geometry(), pos);
    int64_t index = static_cast<int64_t>(indices[l.index_offset]);
    if (index < 0) index += p.axis_size;
    S& dst = out[l.out_base + index * l.axis_stride];
    dst = T::Store(Combine(p.reduction, T::Load(dst), T::Load(updates[l.update_offset])));
  }
}

}  // namespace

gpuError_t LaunchSequential(const Params& p, bool copy, int threads, ErrorSlot slot, gpuStream_t stream) {
  return VisitTypes<true>(p, [&]<typename T, typename I>() {
    SequentialKernel<T, I><<<1, threads, 0, stream>>>(p, copy && !p.in_place, slot);
    return gpuGetLastError();
  });
}

gpuError_t LaunchCopy(const Params& p, const CopyConfig& copy, gpuStream_t stream) {
  return VisitTypes<true>(p, [&]<typename T, typename I>() { return LaunchCopyOf<T>(p, copy, stream); });
}

}  // namespace opsched::scatter::gpu_kernels
