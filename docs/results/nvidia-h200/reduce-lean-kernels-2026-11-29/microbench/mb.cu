// Microbenchmark: ceilings for bf16 row sum 8192x4096 and f16 column sum 16384x4096 on sm_90.
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cstdio>
#include <vector>
#include <algorithm>
#include <functional>
#include "ops/reduce/reduce_cuda.h"
namespace rk = opsched::reduce::gpu_kernels;
namespace rr = opsched::reduce;
#define CK(x) do { cudaError_t e = (x); if (e != cudaSuccess) { printf("err %s line %d\n", cudaGetErrorString(e), __LINE__); exit(1);} } while (0)

__global__ void FlushRead(const uint4* p, size_t n, unsigned* sink) {
  unsigned acc = 0;
  for (size_t i = blockIdx.x * size_t(blockDim.x) + threadIdx.x; i < n; i += size_t(gridDim.x) * blockDim.x) { uint4 v = p[i]; acc ^= v.x ^ v.y ^ v.z ^ v.w; }
  if (acc == 0x12345678u) *sink = acc;
}
template <int U>
__global__ void PureRead(const uint4* __restrict__ p, size_t n, unsigned* sink) {
  unsigned acc = 0;
  const size_t stride = size_t(gridDim.x) * blockDim.x;
  size_t i = blockIdx.x * size_t(blockDim.x) + threadIdx.x;
  for (; i + (U - 1) * stride < n; i += U * stride) {
    uint4 v[U];
#pragma unroll
    for (int u = 0; u < U; ++u) v[u] = p[i + u * stride];
#pragma unroll
    for (int u = 0; u < U; ++u) acc += v[u].x ^ v[u].y ^ v[u].z ^ v[u].w;
  }
  for (; i < n; i += stride) { uint4 v = p[i]; acc += v.x ^ v.y ^ v.z ^ v.w; }
  if (acc == 0x12345678u) *sink = acc;
}
__device__ __forceinline__ float SumBf16x8(uint4 w) {
  const __nv_bfloat162* h = reinterpret_cast<const __nv_bfloat162*>(&w);
  float s = 0;
#pragma unroll
  for (int k = 0; k < 4; ++k) { float2 f = __bfloat1622float2(h[k]); s += f.x; s += f.y; }
  return s;
}
// G threads per row, U loads in flight, rows of `chunks` 16-byte chunks; persistent: grid-stride over rows.
template <int G, int U>
__global__ void Rows(const uint4* __restrict__ x, int rows, int chunks, float* __restrict__ y) {
  const int lane = threadIdx.x % G;
  const int groups = gridDim.x * (blockDim.x / G);
  for (int r = blockIdx.x * (blockDim.x / G) + threadIdx.x / G; r < rows; r += groups) {
    const uint4* row = x + size_t(r) * chunks;
    float acc = 0;
    for (int c0 = lane; c0 < chunks; c0 += G * U) {
      uint4 v[U];
#pragma unroll
      for (int u = 0; u < U; ++u) if (c0 + u * G < chunks) v[u] = row[c0 + u * G];
#pragma unroll
      for (int u = 0; u < U; ++u) if (c0 + u * G < chunks) acc += SumBf16x8(v[u]);
    }
#pragma unroll
    for (int o = G / 2; o > 0; o /= 2) acc += __shfl_xor_sync(0xffffffffu, acc, o, G);
    if (lane == 0) y[r] = acc;
  }
}
// Block of B threads per row (B > 32): U loads each, block reduce.
template <int U>
__global__ void RowsBlock(const uint4* __restrict__ x, int rows, int chunks, float* __restrict__ y) {
  __shared__ float s[32];
  for (int r = blockIdx.x; r < rows; r += gridDim.x) {
    const uint4* row = x + size_t(r) * chunks;
    float acc = 0;
    for (int c0 = threadIdx.x; c0 < chunks; c0 += blockDim.x * U) {
      uint4 v[U];
#pragma unroll
      for (int u = 0; u < U; ++u) if (c0 + u * blockDim.x < chunks) v[u] = row[c0 + u * blockDim.x];
#pragma unroll
      for (int u = 0; u < U; ++u) if (c0 + u * blockDim.x < chunks) acc += SumBf16x8(v[u]);
    }
    for (int o = 16; o > 0; o /= 2) acc += __shfl_xor_sync(0xffffffffu, acc, o);
    __syncthreads();
    if (threadIdx.x % 32 == 0) s[threadIdx.x / 32] = acc;
    __syncthreads();
    if (threadIdx.x < 32) {
      acc = threadIdx.x < blockDim.x / 32 ? s[threadIdx.x] : 0;
      for (int o = 16; o > 0; o /= 2) acc += __shfl_xor_sync(0xffffffffu, acc, o);
      if (threadIdx.x == 0) y[r] = acc;
    }
  }
}
__device__ __forceinline__ void AddHalf8(float* a, uint4 w) {
  const __half2* h = reinterpret_cast<const __half2*>(&w);
#pragma unroll
  for (int k = 0; k < 4; ++k) { float2 f = __half22float2(h[k]); a[2 * k] += f.x; a[2 * k + 1] += f.y; }
}
// Columns: blockDim (BX, BY), gridDim (cols8/BX, split); partial[split][cols] or y directly when split == 1.
template <int U, bool kWait>
__global__ void Cols(const uint4* __restrict__ x, int rows, int cols8, int per_split, float* __restrict__ partial) {
  extern __shared__ float sh[];
  const int c = blockIdx.x * blockDim.x + threadIdx.x;
  const int begin = blockIdx.y * per_split, end = min(rows, begin + per_split);
  float a[8] = {0, 0, 0, 0, 0, 0, 0, 0};
  for (int k0 = begin + threadIdx.y; k0 < end; k0 += blockDim.y * U) {
    uint4 v[U];
#pragma unroll
    for (int u = 0; u < U; ++u) if (k0 + u * blockDim.y < end) v[u] = x[size_t(k0 + u * blockDim.y) * cols8 + c];
#pragma unroll
    for (int u = 0; u < U; ++u) if (k0 + u * blockDim.y < end) AddHalf8(a, v[u]);
  }
  if (blockDim.y > 1) {
    for (int e = 0; e < 8; ++e) sh[(threadIdx.y * blockDim.x + threadIdx.x) * 8 + e] = a[e];
    __syncthreads();
    if (threadIdx.y == 0) for (int r = 1; r < blockDim.y; ++r) for (int e = 0; e < 8; ++e) a[e] += sh[(r * blockDim.x + threadIdx.x) * 8 + e];
  }
  if (kWait) asm volatile("griddepcontrol.launch_dependents;" ::: "memory");
  if (threadIdx.y == 0) for (int e = 0; e < 8; ++e) partial[size_t(blockIdx.y) * cols8 * 8 + c * 8 + e] = a[e];
}
template <bool kWait>
__global__ void Finish(const float* __restrict__ partial, int split, int cols, __half* y) {
  if (kWait) asm volatile("griddepcontrol.wait;" ::: "memory");
  const int m = blockIdx.x * blockDim.x + threadIdx.x;
  if (m >= cols) return;
  float acc = 0;
  for (int j = 0; j < split; ++j) acc += partial[size_t(j) * cols + m];
  y[m] = __float2half(acc);
}

struct Bench {
  cudaEvent_t a, b; uint4* flush; size_t flush_n; unsigned* sink;
  Bench() { CK(cudaEventCreate(&a)); CK(cudaEventCreate(&b)); flush_n = (size_t(120) << 20) / 16; CK(cudaMalloc(&flush, flush_n * 16)); CK(cudaMemset(flush, 1, flush_n * 16)); CK(cudaMalloc(&sink, 4)); }
  float Time(const std::function<void()>& f, int reps = 60) {
    for (int i = 0; i < 5; ++i) f();
    std::vector<float> t;
    for (int i = 0; i < reps; ++i) {
      FlushRead<<<132 * 8, 512>>>(flush, flush_n, sink);
      CK(cudaEventRecord(a)); f(); CK(cudaEventRecord(b)); CK(cudaEventSynchronize(b));
      float ms; CK(cudaEventElapsedTime(&ms, a, b)); t.push_back(ms * 1000);
    }
    CK(cudaGetLastError());
    std::sort(t.begin(), t.end()); return t[t.size() / 2];
  }
};

int main(int argc, char** argv) {
  const bool only = argc > 1;
  Bench B;
  int sms; CK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0));
  // Copy reference: 512 MiB.
  size_t big = size_t(512) << 20; void *s, *d; CK(cudaMalloc(&s, big)); CK(cudaMalloc(&d, big)); CK(cudaMemset(s, 0, big));
  float tc = B.Time([&] { CK(cudaMemcpyAsync(d, s, big, cudaMemcpyDeviceToDevice)); }, 20);
  double copy_gbs = 2.0 * big / tc / 1e3;
  printf("copy 512MiB %.1f us = %.0f GB/s\n", tc, copy_gbs);
  auto pct = [&](double bytes, float us) { return 100.0 * bytes / us / 1e3 / copy_gbs; };
  // Rows: 8192 x 4096 bf16.
  const int R = 8192, C = 4096, chunks = C / 8; const size_t xb = size_t(R) * C * 2;
  uint4* x; CK(cudaMalloc(&x, xb));
  { std::vector<__nv_bfloat16> h(size_t(R) * C); for (size_t i = 0; i < h.size(); ++i) h[i] = __float2bfloat16(float((i * 2654435761u) % 1000) / 1000.f); CK(cudaMemcpy(x, h.data(), xb, cudaMemcpyHostToDevice)); }
  float* y; CK(cudaMalloc(&y, 1 << 24));
  if (!only) for (int U : {4, 8, 16}) for (int grid : {0, sms * 4, sms * 8, sms * 16}) {
    float t = B.Time([&] { int g = grid ? grid : 1 << 20; if (U == 4) PureRead<4><<<g, 256>>>(x, xb / 16, B.sink); else if (U == 8) PureRead<8><<<g, 256>>>(x, xb / 16, B.sink); else PureRead<16><<<g, 256>>>(x, xb / 16, B.sink); });
    printf("pure read 64MB U=%d grid=%d: %.2f us %.1f%% of copy\n", U, grid, t, pct(xb, t));
  }
#define ROWS(G, U, BLK, GRID) { float t = B.Time([&] { int g = GRID ? GRID : (R + BLK / G - 1) / (BLK / G); Rows<G, U><<<g, BLK>>>(x, R, chunks, y); }); printf("rows G=%d U=%d block=%d grid=%d: %.2f us %.1f%%\n", G, U, BLK, GRID, t, pct(xb, t)); }
  if (!only) { ROWS(16, 4, 256, 0) ROWS(16, 8, 256, 0) ROWS(16, 16, 256, 0) ROWS(16, 32, 256, 0)
  ROWS(32, 4, 256, 0) ROWS(32, 8, 256, 0) ROWS(32, 16, 256, 0) ROWS(32, 16, 512, 0) ROWS(32, 16, 128, 0)
  ROWS(8, 8, 256, 0) ROWS(8, 16, 256, 0) ROWS(8, 32, 256, 0)
  ROWS(32, 8, 256, sms * 8) ROWS(32, 16, 256, sms * 8) ROWS(16, 8, 256, sms * 8) ROWS(32, 16, 512, sms * 4) }
#define RB(U, BLK) { float t = B.Time([&] { RowsBlock<U><<<R, BLK>>>(x, R, chunks, y); }); printf("rows block=%d U=%d: %.2f us %.1f%%\n", BLK, U, t, pct(xb, t)); }
  if (!only) { RB(1, 512) RB(2, 256) RB(4, 128) RB(1, 256) RB(2, 128) }
  // Columns: 16384 x 4096 f16.
  const int CR = 16384, CC = 4096, cols8 = CC / 8; const size_t cb = size_t(CR) * CC * 2;
  uint4* cx; CK(cudaMalloc(&cx, cb)); CK(cudaMemset(cx, 0x3c, cb));
  float* part; CK(cudaMalloc(&part, size_t(256) * CC * 4)); __half* cy; CK(cudaMalloc(&cy, CC * 2));
  if (!only) for (int pdl : {0, 1}) for (int BX : {32, 64}) for (int BY : {4, 8}) for (int split : {16, 32, 64, 128}) for (int U : {4, 8}) {
    if (BX * BY > 512) continue;
    const int per = (CR + split - 1) / split; dim3 grid(cols8 / BX, split), blk(BX, BY); size_t sh = size_t(BX) * BY * 8 * 4;
    auto fin = [&] {
      if (!pdl) { Finish<false><<<CC / 256, 256>>>(part, split, CC, cy); return; }
      cudaLaunchAttribute at[1]; at[0].id = cudaLaunchAttributeProgrammaticStreamSerialization; at[0].val.programmaticStreamSerializationAllowed = 1;
      cudaLaunchConfig_t cfg = {}; cfg.gridDim = CC / 256; cfg.blockDim = 256; cfg.attrs = at; cfg.numAttrs = 1;
      CK(cudaLaunchKernelEx(&cfg, Finish<true>, (const float*)part, split, CC, cy));
    };
    float t = B.Time([&] {
      if (U == 4) { if (pdl) Cols<4, true><<<grid, blk, sh>>>(cx, CR, cols8, per, part); else Cols<4, false><<<grid, blk, sh>>>(cx, CR, cols8, per, part); }
      else { if (pdl) Cols<8, true><<<grid, blk, sh>>>(cx, CR, cols8, per, part); else Cols<8, false><<<grid, blk, sh>>>(cx, CR, cols8, per, part); }
      fin(); });
    float t1 = B.Time([&] { if (U == 4) Cols<4, false><<<grid, blk, sh>>>(cx, CR, cols8, per, part); else Cols<8, false><<<grid, blk, sh>>>(cx, CR, cols8, per, part); });
    printf("cols pdl=%d BX=%d BY=%d split=%d U=%d: %.2f us %.1f%% (first pass alone %.2f)\n", pdl, BX, BY, split, U, t, pct(cb, t), t1);
  }
  for (int U : {4, 8, 16}) { float t = B.Time([&] { if (U == 4) PureRead<4><<<sms * 8, 256>>>(cx, cb / 16, B.sink); else if (U == 8) PureRead<8><<<sms * 8, 256>>>(cx, cb / 16, B.sink); else PureRead<16><<<sms * 8, 256>>>(cx, cb / 16, B.sink); });
    printf("pure read 128MB U=%d: %.2f us %.1f%%\n", U, t, pct(cb, t)); }
  {  // opsched's own launchers on the same buffers.
    rr::Problem p; p.op = rr::ReduceOp::kSum; p.in_type = rr::ElementType::kBF16; p.out_type = rr::ElementType::kBF16;
    p.outputs = R; p.length = C; p.kept_rank = 1; p.kept_shape[0] = R; p.kept_strides[0] = C; p.reduced_rank = 1; p.reduced_shape[0] = C; p.reduced_strides[0] = 1;
    p.rows = true; p.row = C; p.x = x; p.y = y;
    for (auto c : {rk::RowsConfig{16, 256, 8, 1}, rk::RowsConfig{32, 128, 8, 1}, rk::RowsConfig{32, 256, 8, 1}, rk::RowsConfig{64, 256, 8, 1}, rk::RowsConfig{128, 128, 8, 1}, rk::RowsConfig{256, 256, 8, 1}, rk::RowsConfig{16, 256, 8, 2}}) {
      float t = B.Time([&] { CK(rk::LaunchRows(p, c, part, 0)); });
      printf("opsched rows group=%d block=%d: %.2f us %.1f%%\n", c.group, c.block, t, pct(xb, t));
    }
    rr::Problem q; q.op = rr::ReduceOp::kSum; q.in_type = rr::ElementType::kF16; q.out_type = rr::ElementType::kF16;
    q.outputs = CC; q.length = CR; q.kept_rank = 1; q.kept_shape[0] = CC; q.kept_strides[0] = 1; q.reduced_rank = 1; q.reduced_shape[0] = CR; q.reduced_strides[0] = CC;
    q.columns = true; q.x = cx; q.y = cy;
    for (auto c : {rk::ColumnsConfig{32, 4, 8, 64}, rk::ColumnsConfig{32, 8, 8, 16}, rk::ColumnsConfig{32, 8, 8, 32}, rk::ColumnsConfig{32, 4, 8, 32}, rk::ColumnsConfig{64, 8, 8, 32}, rk::ColumnsConfig{32, 16, 2, 8}, rk::ColumnsConfig{32, 16, 8, 8}}) {
      float t = B.Time([&] { CK(rk::LaunchColumns(q, c, part, 0)); });
      printf("opsched cols bx=%d by=%d v=%d split=%d: %.2f us %.1f%%\n", c.block_x, c.block_y, c.vector, c.split, t, pct(cb, t));
    }
  }
  return 0;
}
