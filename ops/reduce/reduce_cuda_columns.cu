// Column reductions: threads side by side take neighbouring outputs, which are
// neighbours in x when the innermost kept dimension is contiguous (a reduction over the
// leading axis, an NHWC bias gradient: coalesced loads); any other layout works with one
// output per thread. A
// block of block_x * block_y threads: block_x threads over outputs, `V` neighbouring
// outputs each (coalesced, vector loads), block_y threads over terms; the block_y
// partial results are combined through shared memory in a fixed order. Over one reduced
// dimension (kOneDim: a leading axis, a column sum) a term's offset is its index times
// that dimension's stride, with no division.
#include "ops/reduce/reduce_cuda_common.cuh"

namespace opsched::reduce::gpu_kernels {
namespace {

inline constexpr int kUnroll = 4;

struct ColumnsGeometry {
  Odometer kept;
  Odometer reduced;
  int64_t stride;     // of the one reduced dimension (kOneDim)
  int64_t per_split;  // terms per split part
  int split;
};

template <typename In, typename Out, int V, bool kOneDim>
__global__ void __launch_bounds__(1024) ColumnsKernel(Problem p, ColumnsGeometry g, AccumulatorOf<In>* __restrict__ partial) {
  using S = typename In::Storage;
  using A = AccumulatorOf<In>;
  extern __shared__ __align__(8) unsigned char shared_bytes[];
  A* shared = reinterpret_cast<A*>(shared_bytes);
  const S* __restrict__ x = static_cast<const S*>(p.x);
  const int64_t m0 = (int64_t(blockIdx.x) * blockDim.x + threadIdx.x) * V;
  const bool active = m0 < p.outputs;
  const int j = blockIdx.y;
  A acc[V];
#pragma unroll
  for (int e = 0; e < V; ++e) acc[e] = IdentityOf<A>(p.op);
  if (active) {
    const int64_t base = g.kept.Offset(static_cast<uint32_t>(m0));
    const int64_t begin = int64_t(j) * g.per_split;
    const int64_t end = begin + g.per_split < p.length ? begin + g.per_split : p.length;
    const int64_t step = blockDim.y;
    WithTermOp(p.op, [&](auto term_op) {
      constexpr ReduceOp kOp = decltype(term_op)::value;
      // Term numbers are 32-bit (length < 2^31, and k0 + step * kUnroll below 2^32);
      // over one reduced dimension the offset is one 32 x 32 -> 64-bit multiply
      // (stride < 2^32, checked at launch).
      const S* __restrict__ column = x + base;
      const uint32_t end32 = static_cast<uint32_t>(end);
      const uint32_t step32 = static_cast<uint32_t>(step);
      const uint32_t stride32 = static_cast<uint32_t>(g.stride);
      for (uint32_t k0 = static_cast<uint32_t>(begin) + threadIdx.y; k0 < end32; k0 += step32 * kUnroll) {
        Vec<S, V> v[kUnroll];
#pragma unroll
        for (int u = 0; u < kUnroll; ++u) {
          const uint32_t k = k0 + u * step32;
          if (k < end32) {
            const int64_t offset = kOneDim ? static_cast<int64_t>(uint64_t(k) * stride32) : g.reduced.Offset(k);
            v[u] = LoadVec<S, V>(column + offset);
          }
        }
#pragma unroll
        for (int u = 0; u < kUnroll; ++u) {
          if (k0 + u * step32 < end32) {
#pragma unroll
            for (int e = 0; e < V; ++e) acc[e] = Combine(kOp, acc[e], Term<In>(kOp, v[u].v[e]));
          }
        }
      }
    });
  }
  // LaunchFinish's kernel may start; it waits for this grid's writes (the trigger only
  // where there is one: RowsBody).
  if (g.split > 1) gpu::AllowDependentLaunch();
  if (blockDim.y > 1) {
    const unsigned width = blockDim.x * V;
#pragma unroll
    for (int e = 0; e < V; ++e) shared[threadIdx.y * width + threadIdx.x * V + e] = acc[e];
    __syncthreads();
    if (threadIdx.y == 0) {
      for (unsigned r = 1; r < blockDim.y; ++r) {
#pragma unroll
        for (int e = 0; e < V; ++e) acc[e] = Combine(p.op, acc[e], shared[r * width + threadIdx.x * V + e]);
      }
    }
  }
  if (threadIdx.y == 0 && active) {
#pragma unroll
    for (int e = 0; e < V; ++e) {
      if (g.split == 1) {
        static_cast<typename Out::Storage*>(p.y)[m0 + e] = Output<Out>(p, acc[e]);
      } else {
        partial[int64_t(j) * p.outputs + m0 + e] = acc[e];
      }
    }
  }
}

}  // namespace

bool ColumnsVectorFits(const Problem& p, int vector) {
  if (vector == 1) return true;
  const size_t element = ElementBytes(p.in_type);
  if (!p.columns || vector * element > 16 || p.kept_shape[p.kept_rank - 1] % vector != 0) return false;
  for (int d = 0; d + 1 < p.kept_rank; ++d) {
    if (p.kept_strides[d] % vector != 0) return false;
  }
  for (int d = 0; d < p.reduced_rank; ++d) {
    if (p.reduced_strides[d] % vector != 0) return false;
  }
  return true;
}

LaunchShape ColumnsLaunch(const Problem& p, const ColumnsConfig& c) {
  if (p.outputs == 0 || c.block_x < 1 || c.block_y < 1 || c.split < 1) return {};
  const int vector = ColumnsVectorFits(p, c.vector) ? c.vector : 1;
  const int threads = c.block_x * c.block_y;
  const int64_t blocks_x = CeilDiv(CeilDiv(p.outputs, vector), c.block_x);
  // Output lanes inside the outputs, times the thread rows with a term of their own.
  const int64_t per_split = CeilDiv(std::max<int64_t>(p.length, 1), c.split);
  const double useful = double(p.outputs) / double(blocks_x * c.block_x * vector) *
                        std::min(1.0, double(per_split) / c.block_y);
  return LaunchShape{.blocks = blocks_x * c.split,
                     .threads = threads,
                     .shared_bytes = c.block_y > 1 ? size_t(threads) * vector * AccumulatorBytes(p.in_type) : 0,
                     .useful = useful};
}

gpuError_t LaunchColumns(const Problem& p, const ColumnsConfig& c, void* workspace, gpuStream_t stream,
                         bool finish) {
  if (p.outputs == 0) return gpuSuccess;
  if (p.length == 0) return LaunchFinish(p, nullptr, 0, stream);
  const int threads = c.block_x * c.block_y;
  if (c.split < 1 || c.split > 65535 || threads > 1024 || threads < 1 || p.outputs > kMaxExtent ||
      p.length > kMaxExtent) {
    return gpuErrorInvalidValue;
  }
  const size_t element = ElementBytes(p.in_type);
  int vector = c.vector;
  if (!ColumnsVectorFits(p, vector) || !Aligned(p.x, vector * element)) vector = 1;
  ColumnsGeometry g;
  g.kept = Odometer(p.kept_rank, p.kept_shape, p.kept_strides);
  g.reduced = Odometer(p.reduced_rank, p.reduced_shape, p.reduced_strides);
  g.stride = p.reduced_rank == 1 ? p.reduced_strides[0] : 0;
  g.split = c.split;
  g.per_split = CeilDiv(p.length, c.split);
  const dim3 block(c.block_x, c.block_y);
  const int64_t blocks_x = CeilDiv(CeilDiv(p.outputs, vector), c.block_x);
  if (blocks_x > kMaxExtent) return gpuErrorInvalidValue;
  const dim3 grid(static_cast<unsigned>(blocks_x), static_cast<unsigned>(c.split));
  const size_t shared = c.block_y > 1 ? size_t(threads) * vector * AccumulatorBytes(p.in_type) : 0;
  gpuError_t err = VisitAllTypes(p, [&]<typename In, typename Out>() {
    auto* partial = c.split > 1 ? static_cast<AccumulatorOf<In>*>(workspace) : nullptr;
    return VisitPow2UpTo8(vector, [&]<int V>() {
      if constexpr (V * sizeof(typename In::Storage) <= 16) {
        if (p.reduced_rank == 1 && g.stride >= 0 && g.stride < (int64_t(1) << 32)) {
          ColumnsKernel<In, Out, V, true><<<grid, block, shared, stream>>>(p, g, partial);
        } else {
          ColumnsKernel<In, Out, V, false><<<grid, block, shared, stream>>>(p, g, partial);
        }
        return gpuGetLastError();
      } else {
        return gpuErrorInvalidValue;
      }
    });
  });
  if (err != gpuSuccess || c.split == 1 || !finish) return err;
  return LaunchFinish(p, workspace, c.split, stream);
}

}  // namespace opsched::reduce::gpu_kernels
