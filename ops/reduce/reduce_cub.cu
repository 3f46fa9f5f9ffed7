// The CUB externs: DeviceReduce for one output over a contiguous x, and
// DeviceSegmentedReduce for contiguous rows, one per output. Terms are loaded through a
// transform iterator (conversion to float, squares for sumsq); results that need a
// final step (mean, a 16-bit output) go through a float buffer and the finish kernel.
#include <cub/device/device_reduce.cuh>
#include <cub/device/device_segmented_reduce.cuh>
#include <thrust/iterator/counting_iterator.h>
#include <thrust/iterator/transform_iterator.h>

#include "ops/reduce/reduce_cuda_common.cuh"

namespace opsched::reduce::gpu_kernels {
namespace {

template <typename In>
struct LoadTerm {
  ReduceOp op;
  __host__ __device__ float operator()(typename In::Storage v) const { return Transform(op, In::Load(v)); }
};

struct CombineOp {
  ReduceOp op;
  __host__ __device__ float operator()(float a, float b) const { return Combine(op, a, b); }
};

struct RowStart {
  int64_t row;
  __host__ __device__ int64_t operator()(int64_t m) const { return m * row; }
};

bool Direct(const Problem& p) { return p.out_type == ElementType::kF32 && p.op != ReduceOp::kMean; }

size_t ResultBytes(const Problem& p) { return Direct(p) ? 0 : (static_cast<size_t>(p.outputs) * 4 + 255) / 256 * 256; }

// Runs CUB (or only asks for its temporary bytes when temp is null).
template <typename In>
cudaError_t Cub(const Problem& p, bool segmented, void* temp, size_t& temp_bytes, float* out, cudaStream_t stream) {
  using S = typename In::Storage;
  auto terms = thrust::make_transform_iterator(static_cast<const S*>(p.x), LoadTerm<In>{p.op});
  const CombineOp combine{p.op};
  if (!segmented) {
    return cub::DeviceReduce::Reduce(temp, temp_bytes, terms, out, p.length, combine, Identity(p.op), stream);
  }
  auto starts = thrust::make_transform_iterator(thrust::counting_iterator<int64_t>(0), RowStart{p.row});
  return cub::DeviceSegmentedReduce::Reduce(temp, temp_bytes, terms, out, p.outputs, starts, starts + 1, combine,
                                            Identity(p.op), stream);
}

}  // namespace

size_t CubWorkspaceBytes(const Problem& p, bool segmented) {
  size_t temp = 0;
  VisitTypes(p, [&]<typename In, typename Out>() {
    return Cub<In>(p, segmented, nullptr, temp, nullptr, nullptr);
  });
  return ResultBytes(p) + temp;
}

gpuError_t LaunchCub(const Problem& p, bool segmented, void* workspace, size_t workspace_bytes, gpuStream_t stream) {
  if (p.outputs == 0) return gpuSuccess;
  if (p.length == 0) return LaunchFinish(p, nullptr, 0, stream);
  const size_t result_bytes = ResultBytes(p);
  if (workspace_bytes < result_bytes) return gpuErrorInvalidValue;
  float* out = Direct(p) ? static_cast<float*>(p.y) : static_cast<float*>(workspace);
  void* temp = static_cast<char*>(workspace) + result_bytes;
  size_t temp_bytes = workspace_bytes - result_bytes;
  const gpuError_t err = VisitTypes(p, [&]<typename In, typename Out>() {
    return Cub<In>(p, segmented, temp, temp_bytes, out, stream);
  });
  if (err != gpuSuccess || Direct(p)) return err;
  return LaunchFinish(p, out, 1, stream);
}

}  // namespace opsched::reduce::gpu_kernels
