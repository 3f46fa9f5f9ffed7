// Row reductions: the innermost reduced dimension is contiguous, so each output's terms
// are runs of `row` contiguous elements (one run for a plain row, N runs of H*W for an
// NCHW bias gradient). A group of G threads takes one output (or one split part of it)
// and walks its runs `V` elements at a time, kUnroll loads in flight per thread. Where
// each output's terms are one run (a plain row, or a whole tensor split in parts:
// kOneRun), a term's offset is the output's base plus its index, with no division, and
// the split parts of the run interleave G chunks at a time (part j takes chunks from
// j*G, then from (split + j)*G, ...), so that all parts sweep the run together like a
// grid-stride loop instead of each reading a region of its own.
//
// Loads are ordinary ones, not through the read-only cache (LoadVec): on the H100 the
// i32 row sum took 40.3 us with it and 35.0 without; f16, bf16 and i64 rows were within
// 1.5% either way.
#include "ops/reduce/reduce_cuda_common.cuh"

namespace opsched::reduce::gpu_kernels {
namespace {

inline constexpr int kUnroll = 4;

struct RowsGeometry {
  Odometer kept;         // output -> offset
  Odometer segments;     // run -> offset (the reduced dimensions but the innermost)
  FastDivmod per_run;    // chunks of V elements per run
  FastDivmod per_output; // split parts per output: item -> (output, part)
  int64_t chunks;        // chunks per output
  int64_t per_split;     // chunks per split part
  int split;
  int group;
};

// The kernel's body for one combining op kOp (a compile-time constant: no switch per
// term, per shuffle or per block-reduction step). Group g of the grid takes item g:
// output g / split, part g % split (32-bit: outputs * split < 2^32, checked at launch).
template <typename In, typename Out, int V, bool kOneRun, ReduceOp kOp>
__device__ __forceinline__ void RowsBody(const Problem& p, const RowsGeometry& g, AccumulatorOf<In>* __restrict__ partial,
                                         AccumulatorOf<In>* shared) {
  using S = typename In::Storage;
  using A = AccumulatorOf<In>;
  const S* __restrict__ x = static_cast<const S*>(p.x);
  const int G = g.group;
  const uint32_t lane = threadIdx.x & (G - 1);
  const uint32_t item = blockIdx.x * (blockDim.x / G) + threadIdx.x / G;
  const bool active = item < static_cast<uint32_t>(p.outputs) * static_cast<uint32_t>(g.split);
  uint32_t m = 0, j = 0;
  if (active) g.per_output.DivMod(item, &m, &j);
  A acc = IdentityOf<A>(kOp);
  // The terms of one load combined first, then into acc: chains of V, not U * V,
  // dependent combines.
  auto add = [&](const Vec<S, V>& v) {
    A part = Term<In>(kOp, v.v[0]);
#pragma unroll
    for (int e = 1; e < V; ++e) part = Combine(kOp, part, Term<In>(kOp, v.v[e]));
    acc = Combine(kOp, acc, part);
  };
  if (active) {
    const int64_t base = g.kept.Offset(m);
    if constexpr (kOneRun) {
      // One run per output: chunk c of it is run[c], with 32-bit chunk numbers
      // (chunks + step * kUnroll < 2^32, checked at launch); the split parts interleave.
      const Vec<S, V>* __restrict__ run = reinterpret_cast<const Vec<S, V>*>(x + base);
      const uint32_t end = static_cast<uint32_t>(g.chunks);
      const uint32_t step = static_cast<uint32_t>(G) * g.split;
      for (uint32_t c0 = j * G + lane; c0 < end; c0 += step * kUnroll) {
        Vec<S, V> v[kUnroll];
#pragma unroll
        for (int u = 0; u < kUnroll; ++u) {
          if (c0 + u * step < end) v[u] = run[c0 + u * step];
        }
#pragma unroll
        for (int u = 0; u < kUnroll; ++u) {
          if (c0 + u * step < end) add(v[u]);
        }
      }
    } else {
      const int64_t begin = int64_t(j) * g.per_split;
      const int64_t end = begin + g.per_split >= g.chunks ? g.chunks : begin + g.per_split;
      for (int64_t c0 = begin + lane; c0 < end; c0 += int64_t(G) * kUnroll) {
        Vec<S, V> v[kUnroll];
#pragma unroll
        for (int u = 0; u < kUnroll; ++u) {
          const int64_t c = c0 + int64_t(u) * G;
          if (c < end) {
            uint32_t run, chunk;
            g.per_run.DivMod(static_cast<uint32_t>(c), &run, &chunk);
            v[u] = *reinterpret_cast<const Vec<S, V>*>(x + base + g.segments.Offset(run) + int64_t(chunk) * V);
          }
        }
#pragma unroll
        for (int u = 0; u < kUnroll; ++u) {
          if (c0 + int64_t(u) * G < end) add(v[u]);
        }
      }
    }
  }
  // The kernel that combines split partials (LaunchFinish, launched dependent) may start;
  // it waits for this grid's writes. Only where there is one: the trigger cost the 1M
  // rows of 32 floats in blocks of 128 18% on the H200 (38.2 -> 45.2 us).
  if (g.split > 1) gpu::AllowDependentLaunch();
  if (G <= 32) {
    acc = GroupReduce(kOp, acc, G);
  } else {
    acc = BlockReduce(kOp, acc, shared);
  }
  if (active && lane == 0) {
    if (g.split == 1) {
      static_cast<typename Out::Storage*>(p.y)[m] = Output<Out>(p, acc);
    } else {
      partial[int64_t(j) * p.outputs + m] = acc;
    }
  }
}

template <typename In, typename Out, int V, bool kOneRun>
__global__ void __launch_bounds__(1024) RowsKernel(Problem p, RowsGeometry g, AccumulatorOf<In>* __restrict__ partial) {
  __shared__ AccumulatorOf<In> shared[32];
  WithTermOp(p.op, [&](auto term_op) {
    RowsBody<In, Out, V, kOneRun, decltype(term_op)::value>(p, g, partial, shared);
  });
}

}  // namespace

bool RowsVectorFits(const Problem& p, int vector) {
  if (vector == 1) return true;
  const size_t element = ElementBytes(p.in_type);
  if (!p.rows || vector * element > 16 || p.row % vector != 0) return false;
  for (int d = 0; d < p.reduced_rank; ++d) {
    if (p.reduced_strides[d] % vector != 0 && d != p.reduced_rank - 1) return false;
  }
  for (int d = 0; d < p.kept_rank; ++d) {
    if (p.kept_strides[d] % vector != 0) return false;
  }
  return true;
}

LaunchShape RowsLaunch(const Problem& p, const RowsConfig& c) {
  if (p.outputs == 0 || c.group < 1 || c.split < 1) return {};
  const int vector = RowsVectorFits(p, c.vector) ? c.vector : 1;
  const int threads = c.group <= 32 ? c.block : c.group;
  const int64_t groups_per_block = std::max(threads / c.group, 1);
  const int64_t blocks = CeilDiv(p.outputs * c.split, groups_per_block);
  // Groups with an output part, times the lanes of a group with a load of their own.
  const int64_t per_split = CeilDiv(std::max<int64_t>(p.length / vector, 1), c.split);
  const double useful = double(p.outputs * c.split) / double(blocks * groups_per_block) *
                        std::min(1.0, double(per_split) / c.group);
  return LaunchShape{.blocks = blocks, .threads = threads, .shared_bytes = 0, .useful = useful};
}

gpuError_t LaunchRows(const Problem& p, const RowsConfig& c, void* workspace, gpuStream_t stream) {
  if (p.outputs == 0) return gpuSuccess;
  if (p.length == 0) return LaunchFinish(p, nullptr, 0, stream);
  const bool pow2 = c.group > 0 && (c.group & (c.group - 1)) == 0;
  if (!p.rows || !pow2 || c.group > 1024 || c.split < 1 || p.outputs > kMaxExtent || p.length > kMaxExtent) {
    return gpuErrorInvalidValue;
  }
  const size_t element = ElementBytes(p.in_type);
  int vector = c.vector;
  if (!RowsVectorFits(p, vector) || !Aligned(p.x, vector * element)) vector = 1;
  RowsGeometry g;
  g.kept = Odometer(p.kept_rank, p.kept_shape, p.kept_strides);
  g.segments = Odometer(p.reduced_rank - 1, p.reduced_shape, p.reduced_strides);
  g.per_run = FastDivmod(static_cast<uint32_t>(p.row / vector));
  g.per_output = FastDivmod(static_cast<uint32_t>(c.split));
  g.chunks = p.length / vector;
  g.split = c.split;
  g.per_split = CeilDiv(g.chunks, c.split);
  g.group = c.group;
  const int threads = c.group <= 32 ? c.block : c.group;
  const int64_t groups_per_block = threads / c.group;
  const int64_t blocks = CeilDiv(p.outputs * c.split, groups_per_block);
  if (threads % 32 != 0 || threads > 1024 || blocks > kMaxExtent) return gpuErrorInvalidValue;
  // RowsKernel's 32-bit item and chunk numbers stay below 2^32.
  if (p.outputs * c.split + 1024 >= (int64_t(1) << 32) || g.chunks + int64_t(c.group) * c.split * kUnroll >= (int64_t(1) << 32)) {
    return gpuErrorInvalidValue;
  }
  gpuError_t err = VisitAllTypes(p, [&]<typename In, typename Out>() {
    auto* partial = c.split > 1 ? static_cast<AccumulatorOf<In>*>(workspace) : nullptr;
    return VisitPow2UpTo8(vector, [&]<int V>() {
      if constexpr (V * sizeof(typename In::Storage) <= 16) {
        if (p.row == p.length) {
          RowsKernel<In, Out, V, true><<<static_cast<unsigned>(blocks), threads, 0, stream>>>(p, g, partial);
        } else {
          RowsKernel<In, Out, V, false><<<static_cast<unsigned>(blocks), threads, 0, stream>>>(p, g, partial);
        }
        return gpuGetLastError();
      } else {
        return gpuErrorInvalidValue;
      }
    });
  });
  if (err != gpuSuccess || c.split == 1) return err;
  return LaunchFinish(p, workspace, c.split, stream);
}

}  // namespace opsched::reduce::gpu_kernels
