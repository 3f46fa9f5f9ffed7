// Own conv2d kernels on the GPU (f32 only, but for the depthwise ones; CUDA and HIP from
// one source). Launchers
// queue work on a stream and return the launch error (gpuErrorInvalidValue for a
// problem or config they do not serve); none synchronises the host.
//
// Indexing: kernels split flat indices with 32-bit FastDivmod, so every flat extent a
// kernel walks (output pixels N*P*Q, tensor elements of x, y, dx, one column buffer)
// must stay below 2^31 (FitsIndexing); addresses are formed in 64 bits from the strides.
#pragma once

#include <cstddef>
#include <cstdint>

#include "core/gpu/portability.h"
#include "core/launch_shape.h"
#include "ops/conv2d/conv2d_params.h"

namespace opsched::conv2d::gpu_kernels {

inline constexpr int64_t kMaxExtent = (int64_t(1) << 31) - 1;

// Whether the problem's flat extents (pixels, x, y/dy, dx elements) stay below 2^31.
bool FitsIndexing(const Problem& p);

// ---- Direct convolution (few input channels per group) --------------------------------
// Each thread computes one output pixel for `channels_per_thread` filters of one group;
// a block holds those filters (C/G x R x S each) in shared memory and applies bias and
// activation (Problem::kind == kBiasActivation) before storing. Consecutive threads take
// consecutive pixels: coalesced along q for nchw, vector stores along k for nhwc.
struct DirectConfig {
  int block = 256;               // threads per block: a multiple of 32 in [32, 512]
  int channels_per_thread = 4;   // 1, 2, 4, 8 or 16
};
inline constexpr size_t kDirectMaxSharedBytes = 48 * 1024;
size_t DirectSharedBytes(const Problem& p, int channels_per_thread);
// The config's block and channels are supported and its filters fit in shared memory.
bool DirectFits(const Problem& p, const DirectConfig& c);
gpuError_t LaunchDirect(const Problem& p, const DirectConfig& c, gpuStream_t stream);

// ---- Depthwise and grouped with few channels per group (f32, f16, bf16) ---------------
// f32 accumulation, bias and activation fused (conv2d_cuda_depthwise.cu). nchw: a tile of
// `rows` x `columns` outputs of one (image, filter) plane per block of columns x 8
// threads, the tile's input window staged in shared memory per channel of the group.
// nchw with rows 0 (direct): a thread computes `pixels` neighbouring outputs of one row
// straight from global memory, in blocks of `block` threads.
// nhwc: a thread computes `pixels` neighbouring outputs along q for `vector` neighbouring
// channels (vector > 1 needs one filter per channel, K = C = G, and channels contiguous
// and aligned at every pixel; misaligned pointers fall back to one channel), in blocks
// of `block` threads.
// The unrolled filter size of a problem: 3, 5 or 7 for square filters at equal strides
// of 1 or 2 and dilation 1; 0 otherwise (the depthwise kernels' general forms; the
// staged kernel needs one).
inline int UnrolledFilter(const Problem& p) {
  const bool square = p.r == p.s && (p.r == 3 || p.r == 5 || p.r == 7);
  const bool strides = p.stride_h == p.stride_w && (p.stride_h == 1 || p.stride_h == 2);
  return square && strides && p.dil_h == 1 && p.dil_w == 1 ? static_cast<int>(p.r) : 0;
}

struct DepthwiseConfig {
  int rows = 16, columns = 32;              // nchw tiles (rows 0: direct)
  int vector = 1, pixels = 1, block = 256;  // nhwc; pixels and block also nchw direct
  int filters = 1;                          // nchw direct: filters of one group a thread
};
inline constexpr int64_t kDepthwiseMaxChannelsPerGroup = 16;
// The kernels' launch bound: the unrolled 7x7 runs of 8 pixels need its register budget
// (without it a 512-thread block of them fails to launch for want of registers).
inline constexpr int kDepthwiseMaxBlock = 512;
inline constexpr size_t kDepthwiseMaxSharedBytes = 48 * 1024;
struct NchwWindow {
  int h = 0, w = 0;
};
// The input window an nchw tile stages (h x w floats).
NchwWindow DepthwiseNchwWindow(const Problem& p, const DepthwiseConfig& c);
// A forward (or bias-activation) problem with C/G <= kDepthwiseMaxChannelsPerGroup whose
// config is valid for its layout.
bool DepthwiseFits(const Problem& p, const DepthwiseConfig& c);
gpuError_t LaunchDepthwise(const Problem& p, const DepthwiseConfig& c, gpuStream_t stream);
// nchw direct with `filters` 2, 4 or 8 (conv2d_cuda_grouped.cu): a thread computes
// `pixels` outputs along q for that many filters of one group (dividing K/G), reading each
// input of the group once for all of them; a 3x3 filter at stride 1 or 2, dilation 1,
// and filters * pixels <= kGroupedMaxOutputs. LaunchDepthwise runs it for such configs.
inline constexpr int kGroupedMaxOutputs = 32;
bool GroupedFits(const Problem& p, const DepthwiseConfig& c);
gpuError_t LaunchGrouped(const Problem& p, const DepthwiseConfig& c, gpuStream_t stream);

// Staged depthwise: groups = C = K, a square 3x3, 5x5 or 7x7 filter at stride 1 or 2,
// dilation 1. Blocks of `block` threads; a thread computes `rows_per_thread` outputs down
// a column from shared memory. One kernel per layout, each with its Fits and Launch.
// nchw (conv2d_cuda_depthwise_staged.cu), x contiguous: a block stages the input rows of
// `rows` output rows of a plane (or, where a plane has fewer, of as many whole planes as
// `rows` rows hold) with 16-byte loads. The defaults: the best or within 1.22x of it on
// every depthwise layer tuned on the H100 (MobileNetV2/V3, EfficientNet-B0; rows 32 where
// 64 rows of a wide image do not fit).
// nhwc (conv2d_cuda_depthwise_nhwc_staged.cu), any strides: a block stages the input
// window of a `rows` x `columns` tile of output pixels for `channels` channels (16-byte
// copies where the channels are contiguous and aligned); a thread's strips are
// `rows_per_thread` x 2 outputs.
struct DepthwiseStagedConfig {
  int rows = 64;            // nchw 4, 8, 16, 32 or 64; nhwc 4 to 32
  int rows_per_thread = 4;  // 1, 2 or 4 (nhwc also 8), dividing rows
  int block = 128;          // nhwc: a multiple of channels
  int columns = 8;          // nhwc: 4 to 32 (the space: powers of two and whole-tile extents)
  int columns_per_thread = 1;  // nchw: 1 or 2 neighbouring output columns a strip
  int channels = 32;        // nhwc: 32 (a warp's lanes, one channel each) or 16 (half a warp's)
};
bool DepthwiseStagedFits(const Problem& p, const DepthwiseStagedConfig& c);
gpuError_t LaunchDepthwiseStaged(const Problem& p, const DepthwiseStagedConfig& c, gpuStream_t stream);
bool DepthwiseNhwcStagedFits(const Problem& p, const DepthwiseStagedConfig& c);
gpuError_t LaunchDepthwiseNhwcStaged(const Problem& p, const DepthwiseStagedConfig& c, gpuStream_t stream);
// The staged kernels' grids (Implementation::MainLaunch); blocks 0 where `c` does not fit.
LaunchShape DepthwiseStagedLaunch(const Problem& p, const DepthwiseStagedConfig& c);
LaunchShape DepthwiseNhwcStagedLaunch(const Problem& p, const DepthwiseStagedConfig& c);

// ---- im2col / col2im (the GEMM formulations) --------------------------------------------
// Column buffers of `images` images starting at `first_image`, float, fully written:
//  nchw: per image a (C*R*S) x (P*Q) row-major matrix, rows ordered (c, r, s), s fastest.
//        Group g's rows are [g*CRSg, (g+1)*CRSg) with CRSg = C/G*R*S, so its matrix
//        starts at g*CRSg*P*Q; images follow each other every C*R*S*P*Q floats, i.e.
//        (image, group) matrices are evenly spaced by CRSg*P*Q.
//  nhwc: one (images*P*Q) x (C*R*S) row-major matrix, columns ordered (g, r, s, c'),
//        c' = c - g*C/G fastest. Group g's columns are the contiguous block
//        [g*CRSg, (g+1)*CRSg), so per group the GEMM operand is a plain strided matrix
//        (ld C*R*S) and the groups are a strided batch (stride CRSg). For G = 1 this is
//        the usual (r, s, c) order matching an nhwc filter [K, R, S, C].
// Padding taps are zeros.
int64_t ColumnElements(const Problem& p, int64_t images);
gpuError_t LaunchIm2col(const Problem& p, int64_t first_image, int64_t images, float* col, int block,
                        gpuStream_t stream);
// Backward data: dx (Problem::dx, dx_strides) of images [first_image, first_image +
// images) from their column gradient `col` (laid out as above). Each dx element gathers
// its taps in a fixed order (no atomics: deterministic) and is fully written.
gpuError_t LaunchCol2im(const Problem& p, int64_t first_image, int64_t images, const float* col, int block,
                        gpuStream_t stream);
// y = act(y + b[k]) in place on the forward output (kBiasActivation).
gpuError_t LaunchBiasActivation(const Problem& p, int block, gpuStream_t stream);

// Copies a 4-d tensor between strided views: dst[i] = src[i] over the logical index i
// (dims in logical order). `order` lists the logical dimensions from outermost to
// innermost in dst's memory, so consecutive threads write consecutive dst elements.
// Used to give GEMM operands (filters, dy) the plain matrix layout cuBLAS needs.
struct StridedView {
  int64_t dims[4] = {};
  int64_t src_strides[4] = {};
  int64_t dst_strides[4] = {};
  int order[4] = {0, 1, 2, 3};
};
gpuError_t LaunchPack(const float* src, float* dst, const StridedView& view, int block, gpuStream_t stream);

// ---- Implicit GEMM forward ---------------------------------------------------------------
// Per group a GEMM of (N*P*Q pixels) x (K/G filters) x (C/G*R*S taps) gathered straight
// from x (no column buffer): tiles of bm pixels x bn filters x 8 taps in shared memory
// (double buffered, loads for the next tile in flight during the FMAs), a register block
// per thread, bias and activation fused in the epilogue. SIMT f32 FMAs only (no tensor
// cores), so the result is strict fp32 whatever Problem::math says.
struct ImplicitGemmConfig {
  int bm = 128;  // pixels per block tile
  int bn = 64;   // filters per block tile
};
// Whether (bm, bn) is one of the prebuilt tiles: 64x32, 64x64, 128x64, 128x128.
bool ImplicitGemmTileExists(int bm, int bn);
gpuError_t LaunchImplicitGemm(const Problem& p, const ImplicitGemmConfig& c, gpuStream_t stream);

}  // namespace opsched::conv2d::gpu_kernels
