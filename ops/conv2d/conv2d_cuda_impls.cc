// The GPU conv2d implementations built on own kernels (ops/conv2d/conv2d_cuda.h) and
// cuBLAS: direct (few channels), implicit GEMM, im2col + GEMM, and the backward pass
// through GEMMs with im2col/col2im. f32 only: cuDNN serves f16 and bf16.
//
// GEMM operands, as cuBLAS (column-major) sees the row-major matrices of the kernels:
//   nchw, per (image, group):  Y^T (PQ x K/G)    = col^T (PQ x CRSg) * W^T (CRSg x K/G)
//   nhwc, per group:           Y^T (K/G x pixels) = W (K/G x CRSg) * col^T (CRSg x pixels)
// (CRSg = C/G*R*S; the column buffer layouts are described in conv2d_cuda.h). Filters and
// dy must be plain matrices for that; when their strides are not, they are packed into
// the workspace first.
#include <cublas_v2.h>

#include <algorithm>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "core/format.h"
#include "core/gpu/gpu_status.h"
#include "extern/cublas/cublas_handle.h"
#include "ops/conv2d/conv2d_aux_stream.h"
#include "ops/conv2d/conv2d_cuda.h"
#include "ops/conv2d/conv2d_def.h"
#include "ops/conv2d/conv2d_register.h"
#include "registry/knobs.h"
#include "registry/registry.h"

namespace opsched::conv2d {
namespace {

namespace k = gpu_kernels;

constexpr int kBlock = 256;                         // threads of the im2col-family kernels
constexpr int64_t kMaxWorkspace = int64_t(1) << 30;  // the images knob keeps workspaces under 1 GiB
constexpr int64_t kMaxDirectTaps = 512;               // C/G*R*S of the direct kernel's layers
constexpr size_t kAlign = 256;                        // workspace regions start aligned

gpuStream_t StreamOf(const PreparedArgs& a) { return static_cast<gpuStream_t>(a.stream.native()); }
size_t AlignUp(size_t bytes) { return (bytes + kAlign - 1) / kAlign * kAlign; }
size_t Floats(int64_t count) { return AlignUp(size_t(count) * sizeof(float)); }

// Status of everything own kernels and these GEMM paths share.
Status ServesF32(const Problem& p) {
  if (p.type != ElementType::kF32) {
    return absl::InvalidArgumentError("own kernels and the cuBLAS paths serve f32 only (cuDNN serves f16/bf16)");
  }
  if (p.groups < 1 || p.c % p.groups != 0 || p.k % p.groups != 0) {
    return absl::InvalidArgumentError("needs C and K divisible by groups");
  }
  if (!k::FitsIndexing(p)) {
    return absl::InvalidArgumentError(fmt::format(
        "N*P*Q = {}, N*C*H*W = {}, N*K*P*Q = {}: own kernels index these in 31 bits", p.n * p.p * p.q,
        p.n * p.c * p.h * p.w, p.n * p.k * p.p * p.q));
  }
  return absl::OkStatus();
}

// Powers of two below n, then n: the images per GEMM.
std::vector<int64_t> ImageCounts(int64_t n) {
  std::vector<int64_t> v;
  for (int64_t i = 1; i < n; i *= 2) v.push_back(i);
  v.push_back(std::max<int64_t>(n, 1));
  return v;
}

// ---- GEMM operands --------------------------------------------------------------------------

// A plain matrix view of a strided tensor: element (row, col) at row*ld + col, plus the
// strides that step to the next group and image.
struct Matrix {
  const float* data = nullptr;
  int64_t ld = 0;
  int64_t group_stride = 0;
  int64_t image_stride = 0;
};

// Filters as a row-major (K x CRSg) matrix with taps in the layout's order.
bool FiltersArePlain(const Problem& p) {
  const int64_t* s = p.w_strides;
  const int64_t cg = p.channels_per_group();
  const bool flat = p.layout == Layout::kNchw ? s[3] == 1 && s[2] == p.s && s[1] == p.r * p.s
                                              : s[1] == 1 && s[3] == cg && s[2] == p.s * cg;
  return flat && s[0] >= p.reduction_length();
}

// dy (backward) as nchw per-image (K x PQ) matrices or one nhwc (pixels x K) matrix.
bool GradientIsPlain(const Problem& p) {
  const int64_t* s = p.y_strides;
  if (p.layout == Layout::kNchw) return s[3] == 1 && s[2] == p.q && s[1] >= p.p * p.q;
  return s[1] == 1 && s[2] == p.q * s[3] && s[0] == p.p * p.q * s[3] && s[3] >= p.k;
}

// A 1x1, stride-1, unpadded convolution reads x as its column matrix when x is plain:
// nchw per image (C x HW), nhwc (pixels x C).
bool InputIsColumns(const Problem& p) {
  if (p.r != 1 || p.s != 1 || p.stride_h != 1 || p.stride_w != 1 || p.pad_h != 0 || p.pad_w != 0) return false;
  const int64_t* s = p.x_strides;
  if (p.layout == Layout::kNchw) return s[3] == 1 && s[2] == p.w && s[1] >= p.h * p.w;
  return s[1] == 1 && s[2] == p.w * s[3] && s[0] == p.h * p.w * s[3] && s[3] >= p.c;
}

// Contiguous strides of a logical (d0, d1, d2, d3) tensor in the layout, and the order
// of its dimensions in memory.
void ContiguousStrides(Layout layout, const int64_t dims[4], int64_t strides[4], int order[4]) {
  const int nchw[4] = {0, 1, 2, 3}, nhwc[4] = {0, 2, 3, 1};
  const int* o = layout == Layout::kNchw ? nchw : nhwc;
  int64_t stride = 1;
  for (int i = 3; i >= 0; --i) {
    strides[o[i]] = stride;
    stride *= dims[o[i]];
    order[i] = o[i];
  }
}

// Queues a copy of a strided input into a contiguous buffer in the layout.
Status Pack(const Problem& p, const void* src, const int64_t src_strides[4], const int64_t dims[4], float* dst,
            gpuStream_t stream, std::string_view what) {
  k::StridedView view;
  for (int i = 0; i < 4; ++i) {
    view.dims[i] = dims[i];
    view.src_strides[i] = src_strides[i];
  }
  ContiguousStrides(p.layout, view.dims, view.dst_strides, view.order);
  return gpu::ToStatus(k::LaunchPack(static_cast<const float*>(src), dst, view, kBlock, stream), "pack", what);
}

size_t PackedFiltersBytes(const Problem& p) { return FiltersArePlain(p) ? 0 : Floats(p.k * p.reduction_length()); }
size_t PackedGradientBytes(const Problem& p) { return GradientIsPlain(p) ? 0 : Floats(p.n * p.k * p.p * p.q); }

// The filters as a matrix: w itself, or packed into `scratch` (PackedFiltersBytes).
StatusOr<Matrix> FilterMatrix(const Problem& p, float* scratch, gpuStream_t stream) {
  Matrix m;
  if (FiltersArePlain(p)) {
    m.data = static_cast<const float*>(p.wt);
    m.ld = p.w_strides[0];
  } else {
    const int64_t dims[4] = {p.k, p.channels_per_group(), p.r, p.s};
    OPSCHED_RETURN_IF_ERROR(Pack(p, p.wt, p.w_strides, dims, scratch, stream, "filters"));
    m.data = scratch;
    m.ld = p.reduction_length();
  }
  m.group_stride = p.filters_per_group() * m.ld;
  return m;
}

// dy as a matrix: nchw ld = the channel stride (per image), nhwc ld = the pixel stride.
StatusOr<Matrix> GradientMatrix(const Problem& p, float* scratch, gpuStream_t stream) {
  Matrix m;
  int64_t strides[4];
  if (GradientIsPlain(p)) {
    m.data = static_cast<const float*>(p.y);
    std::copy(p.y_strides, p.y_strides + 4, strides);
  } else {
    const int64_t dims[4] = {p.n, p.k, p.p, p.q};
    int order[4];
    OPSCHED_RETURN_IF_ERROR(Pack(p, p.y, p.y_strides, dims, scratch, stream, "dy"));
    ContiguousStrides(p.layout, dims, strides, order);
    m.data = scratch;
  }
  const bool nchw = p.layout == Layout::kNchw;
  m.ld = nchw ? strides[1] : strides[3];
  m.group_stride = nchw ? p.filters_per_group() * strides[1] : p.filters_per_group();
  m.image_stride = strides[0];
  return m;
}

// ---- cuBLAS calls ----------------------------------------------------------------------------

// One strided-batched GEMM C = alpha op(A) op(B) + beta C (column-major), repeated over
// `outer` with its own pointer steps (cuBLAS batches take one stride per operand; nchw
// problems have two batch dimensions, groups and images).
struct GemmCall {
  cublasOperation_t ta = CUBLAS_OP_N, tb = CUBLAS_OP_N;
  int64_t m = 0, n = 0, k = 0;
  const float* a = nullptr;
  const float* b = nullptr;
  float* c = nullptr;
  int64_t lda = 0, ldb = 0, ldc = 0;
  int64_t stride_a = 0, stride_b = 0, stride_c = 0;
  int64_t batch = 1;
  int64_t outer = 1;
  int64_t outer_a = 0, outer_b = 0, outer_c = 0;
  float beta = 0.0f;
};

bool FitsInt(int64_t v) { return v >= 0 && v <= k::kMaxExtent; }

Status RunGemm(cublasHandle_t handle, Math math, GemmCall g) {
  // Fold the outer loop into the batch when its steps continue the batch's.
  if (g.outer > 1 && g.outer_a == g.batch * g.stride_a && g.outer_b == g.batch * g.stride_b &&
      g.outer_c == g.batch * g.stride_c) {
    g.batch *= g.outer;
    g.outer = 1;
  }
  // Or swap the loops when that makes fewer calls.
  if (g.outer > g.batch) {
    std::swap(g.outer, g.batch);
    std::swap(g.outer_a, g.stride_a);
    std::swap(g.outer_b, g.stride_b);
    std::swap(g.outer_c, g.stride_c);
  }
  for (int64_t v : {g.m, g.n, g.k, g.lda, g.ldb, g.ldc, g.batch}) {
    if (!FitsInt(v)) {
      return absl::InternalError(fmt::format("GEMM extent {} exceeds cuBLAS's 32-bit sizes", v));
    }
  }
  const cublasComputeType_t compute = math == Math::kTf32 ? CUBLAS_COMPUTE_32F_FAST_TF32 : CUBLAS_COMPUTE_32F;
  const float alpha = 1.0f;
  for (int64_t o = 0; o < g.outer; ++o) {
    OPSCHED_RETURN_IF_ERROR(cublas::ToStatus(
        cublasGemmStridedBatchedEx(handle, g.ta, g.tb, int(g.m), int(g.n), int(g.k), &alpha, g.a + o * g.outer_a,
                                   CUDA_R_32F, int(g.lda), g.stride_a, g.b + o * g.outer_b, CUDA_R_32F, int(g.ldb),
                                   g.stride_b, &g.beta, g.c + o * g.outer_c, CUDA_R_32F, int(g.ldc), g.stride_c,
                                   int(g.batch), compute, CUBLAS_GEMM_DEFAULT),
        "cublasGemmStridedBatchedEx"));
  }
  return absl::OkStatus();
}

// Forward: y for images [n0, n0 + images) from their columns (ld = the column matrix's
// row length for nhwc, its PQ row stride for nchw; col_image / col_group its steps).
GemmCall ForwardGemm(const Problem& p, const Matrix& w, const Matrix& col, int64_t n0, int64_t images) {
  GemmCall g;
  const int64_t kg = p.filters_per_group(), taps = p.reduction_length(), pq = p.p * p.q;
  float* y = static_cast<float*>(p.y) + n0 * p.y_strides[0];
  g.k = taps;
  g.batch = p.groups;
  if (p.layout == Layout::kNchw) {
    g.m = pq, g.n = kg;
    g.a = col.data, g.lda = col.ld, g.stride_a = col.group_stride;
    g.b = w.data, g.ldb = w.ld, g.stride_b = w.group_stride;
    g.c = y, g.ldc = p.y_strides[1], g.stride_c = kg * p.y_strides[1];
    g.outer = images, g.outer_a = col.image_stride, g.outer_b = 0, g.outer_c = p.y_strides[0];
  } else {
    g.ta = CUBLAS_OP_T;
    g.m = kg, g.n = images * pq;
    g.a = w.data, g.lda = w.ld, g.stride_a = w.group_stride;
    g.b = col.data, g.ldb = col.ld, g.stride_b = col.group_stride;
    g.c = y, g.ldc = p.y_strides[3], g.stride_c = kg;
  }
  return g;
}

// The column buffer of a chunk as a matrix (see conv2d_cuda.h).
Matrix ColumnMatrix(const Problem& p, const float* col) {
  const int64_t taps = p.reduction_length(), pq = p.p * p.q;
  Matrix m;
  m.data = col;
  if (p.layout == Layout::kNchw) {
    m.ld = pq, m.group_stride = taps * pq, m.image_stride = p.c * p.r * p.s * pq;
  } else {
    m.ld = p.c * p.r * p.s, m.group_stride = taps;
  }
  return m;
}

// x itself as the column matrix of a 1x1 stride-1 unpadded convolution (InputIsColumns).
Matrix InputColumns(const Problem& p) {
  Matrix m;
  m.data = static_cast<const float*>(p.x);
  if (p.layout == Layout::kNchw) {
    m.ld = p.x_strides[1], m.group_stride = p.channels_per_group() * p.x_strides[1], m.image_stride = p.x_strides[0];
  } else {
    m.ld = p.x_strides[3], m.group_stride = p.channels_per_group();
  }
  return m;
}

// ---- Base ------------------------------------------------------------------------------------

// What the own GPU convolutions share: Prepare parses the workload's problem and the
// config's knobs once (MakeRunner); each call binds the tensors and runs.
class Conv2dGpu : public Implementation {
 public:
  DeviceKind device_kind() const override { return DeviceKind::kCuda; }
  StatusOr<std::unique_ptr<Prepared>> Prepare(const Workload& w, const Config& config, const Target&) const override {
    OPSCHED_ASSIGN_OR_RETURN(Runner run, MakeRunner(w, config));
    return MakePrepared(WorkspaceBytes(w, config), [p = MakeProblem(w), run = std::move(run)](const PreparedArgs& a) {
      return run(WithTensors(p, a.tensors), a);
    });
  }
  Status Run(const RunArgs& a) const override { return PrepareAndRun(*this, a); }

 protected:
  // Runs the convolution for the bound problem.
  using Runner = std::function<Status(const Problem& p, const PreparedArgs& a)>;
  // This implementation's run with `config`'s knobs parsed (an error for a config its
  // knobs do not declare).
  virtual StatusOr<Runner> MakeRunner(const Workload& w, const Config& config) const = 0;
  Status Launched(gpuError_t err, std::string_view what) const {
    return gpu::ToStatus(err, what, name());
  }
};

// ---- Direct ----------------------------------------------------------------------------------

class Conv2dCudaDirect : public Conv2dGpu {
 public:
  explicit Conv2dCudaDirect(bool fused) : fused_(fused) {}
  std::string_view op() const override { return fused_ ? "conv2d_bias_act" : "conv2d"; }
  std::string_view name() const override { return fused_ ? "conv2d_bias_act_cuda_direct" : "conv2d_cuda_direct"; }
  ImplementationTraits traits() const override { return {.deterministic = true}; }
  Status Applicable(const Workload& w, const Target&) const override {
    const Problem p = MakeProblem(w);
    OPSCHED_RETURN_IF_ERROR(ServesF32(p));
    if (p.reduction_length() > kMaxDirectTaps) {
      return absl::InvalidArgumentError(fmt::format(
          "C/G*R*S = {} > {}: the direct kernel is for few channels (a filter chunk lives in shared memory)",
          p.reduction_length(), kMaxDirectTaps));
    }
    return absl::OkStatus();
  }
  ConfigSpace Space(const Workload& w, const Target&) const override { return KnobsOf(w).Space(); }
  StatusOr<Runner> MakeRunner(const Workload& w, const Config& config) const override {
    OPSCHED_ASSIGN_OR_RETURN(const k::DirectConfig c, KnobsOf(w).Parse(config));
    return Runner([this, c](const Problem& p, const PreparedArgs& a) {
      return Launched(k::LaunchDirect(p, c, StreamOf(a)), "direct conv2d");
    });
  }

 private:
  static Knobs<k::DirectConfig> KnobsOf(const Workload& w) {
    using C = k::DirectConfig;
    const Problem p = MakeProblem(w);
    const int64_t kg = p.filters_per_group();
    Knobs<C> knobs;
    knobs.Int("block", &C::block, {64, 128, 256, 512})
        .Int("channels_per_thread", &C::channels_per_thread, {1, 2, 4, 8, 16})
        .Constrain("channels_per_thread <= K/G (or 1)",
                   [kg](const C& c) { return c.channels_per_thread == 1 || c.channels_per_thread <= kg; })
        .Constrain("channels_per_thread * C/G*R*S floats fit in 48 KB of shared memory, grid fits",
                   [p](const C& c) { return k::DirectFits(p, c); });
    return knobs;
  }
  bool fused_;
};

// ---- Implicit GEMM ---------------------------------------------------------------------------

struct TileName {
  const char* name;
  int bm, bn;
};
constexpr TileName kTiles[] = {{"64x32", 64, 32}, {"64x64", 64, 64}, {"128x64", 128, 64}, {"128x128", 128, 128}};

class Conv2dCudaImplicitGemm : public Conv2dGpu {
 public:
  explicit Conv2dCudaImplicitGemm(bool fused) : fused_(fused) {}
  std::string_view op() const override { return fused_ ? "conv2d_bias_act" : "conv2d"; }
  std::string_view name() const override {
    return fused_ ? "conv2d_bias_act_cuda_implicit_gemm" : "conv2d_cuda_implicit_gemm";
  }
  ImplementationTraits traits() const override { return {.deterministic = true}; }
  Status Applicable(const Workload& w, const Target&) const override {
    const Problem p = MakeProblem(w);
    OPSCHED_RETURN_IF_ERROR(ServesF32(p));
    if (p.groups * ((p.filters_per_group() + 127) / 128) > 65535) {
      return absl::InvalidArgumentError(fmt::format("{} groups: more filter tiles than a grid holds", p.groups));
    }
    return absl::OkStatus();
  }
  ConfigSpace Space(const Workload& w, const Target&) const override { return KnobsOf(w).Space(); }
  StatusOr<Runner> MakeRunner(const Workload& w, const Config& config) const override {
    OPSCHED_ASSIGN_OR_RETURN(const TileKnobs knobs, KnobsOf(w).Parse(config));
    OPSCHED_ASSIGN_OR_RETURN(const k::ImplicitGemmConfig c, TileOf(knobs));
    return Runner([this, c](const Problem& p, const PreparedArgs& a) {
      return Launched(k::LaunchImplicitGemm(p, c, StreamOf(a)), "implicit GEMM conv2d");
    });
  }

 private:
  // The block tile, pixels x filters.
  struct TileKnobs {
    std::string tile = "128x64";
  };
  static StatusOr<k::ImplicitGemmConfig> TileOf(const TileKnobs& knobs) {
    for (const TileName& t : kTiles) {
      if (knobs.tile == t.name) return k::ImplicitGemmConfig{t.bm, t.bn};
    }
    return absl::InvalidArgumentError(fmt::format("tile={} is not a prebuilt tile", knobs.tile));
  }
  static Knobs<TileKnobs> KnobsOf(const Workload& w) {
    const Problem p = MakeProblem(w);
    std::vector<std::string> tiles;
    for (const TileName& t : kTiles) tiles.push_back(t.name);
    Knobs<TileKnobs> knobs;
    knobs.Word("tile", &TileKnobs::tile, tiles)
        .Constrain("groups * ceil(K/G / tile filters) <= 65535", [p](const TileKnobs& knobs) {
          const StatusOr<k::ImplicitGemmConfig> t = TileOf(knobs);
          return t.ok() && p.groups * ((p.filters_per_group() + t->bn - 1) / t->bn) <= 65535;
        });
    return knobs;
  }
  bool fused_;
};

// ---- im2col + GEMM forward -------------------------------------------------------------------

class Conv2dCudaIm2colGemm : public Conv2dGpu {
 public:
  explicit Conv2dCudaIm2colGemm(bool fused) : fused_(fused) {}
  std::string_view op() const override { return fused_ ? "conv2d_bias_act" : "conv2d"; }
  std::string_view name() const override {
    return fused_ ? "conv2d_bias_act_cuda_im2col_gemm" : "conv2d_cuda_im2col_gemm";
  }
  ImplementationTraits traits() const override {
    return {.deterministic = true, .vendor_library = true, .uses_cublas = true};
  }
  Status Applicable(const Workload& w, const Target&) const override {
    const Problem p = MakeProblem(w);
    OPSCHED_RETURN_IF_ERROR(ServesF32(p));
    if (Bytes(p, 1) > size_t(kMaxWorkspace)) {
      return absl::InvalidArgumentError(
          fmt::format("the column buffer of one image needs {} bytes, over the 1 GiB workspace limit", Bytes(p, 1)));
    }
    return absl::OkStatus();
  }
  ConfigSpace Space(const Workload& w, const Target&) const override { return KnobsOf(w).Space(); }
  // 0 for a config that does not parse (Prepare reports it).
  size_t WorkspaceBytes(const Workload& w, const Config& c) const override {
    const StatusOr<ImagesKnobs> knobs = KnobsOf(w).Parse(c);
    return knobs.ok() ? Bytes(MakeProblem(w), knobs->images) : 0;
  }
  StatusOr<Runner> MakeRunner(const Workload& w, const Config& config) const override {
    OPSCHED_ASSIGN_OR_RETURN(const ImagesKnobs knobs, KnobsOf(w).Parse(config));
    return Runner([this, images = knobs.images](const Problem& p, const PreparedArgs& a) { return RunBound(p, images, a); });
  }

 private:
  // Images per GEMM (and per column buffer).
  struct ImagesKnobs {
    int64_t images = 1;
  };
  static Knobs<ImagesKnobs> KnobsOf(const Workload& w) {
    const Problem p = MakeProblem(w);
    // Without a column buffer the whole batch is one GEMM: nothing to tune.
    const std::vector<int64_t> images = InputIsColumns(p) ? std::vector<int64_t>{p.n} : ImageCounts(p.n);
    Knobs<ImagesKnobs> knobs;
    knobs.Int("images", &ImagesKnobs::images, images)
        .Constrain("workspace (column buffer of `images` images) <= 1 GiB",
                   [p](const ImagesKnobs& k) { return Bytes(p, k.images) <= size_t(kMaxWorkspace); });
    return knobs;
  }
  Status RunBound(const Problem& p, int64_t images_knob, const PreparedArgs& a) const {
    const gpuStream_t stream = StreamOf(a);
    const int64_t images = std::clamp<int64_t>(images_knob, 1, std::max<int64_t>(p.n, 1));
    if (a.workspace_bytes < Bytes(p, images)) {
      return absl::InternalError(fmt::format("{}: workspace of {} bytes, needs {}", name(), a.workspace_bytes,
                                             Bytes(p, images)));
    }
    if (p.n * p.k * p.p * p.q == 0) return absl::OkStatus();
    auto* scratch = static_cast<float*>(a.workspace);
    float* col = InputIsColumns(p) ? nullptr : scratch;
    float* packed = scratch + (col ? Floats(k::ColumnElements(p, images)) / sizeof(float) : 0);
    OPSCHED_ASSIGN_OR_RETURN(const Matrix w, FilterMatrix(p, packed, stream));
    OPSCHED_ASSIGN_OR_RETURN(cublasHandle_t handle, cublas::Handle(stream));
    if (col == nullptr) {
      OPSCHED_RETURN_IF_ERROR(RunGemm(handle, p.math, ForwardGemm(p, w, InputColumns(p), 0, p.n)));
    } else {
      for (int64_t n0 = 0; n0 < p.n; n0 += images) {
        const int64_t count = std::min(images, p.n - n0);
        OPSCHED_RETURN_IF_ERROR(Launched(k::LaunchIm2col(p, n0, count, col, kBlock, stream), "im2col"));
        OPSCHED_RETURN_IF_ERROR(RunGemm(handle, p.math, ForwardGemm(p, w, ColumnMatrix(p, col), n0, count)));
      }
    }
    if (p.kind == Kind::kBiasActivation) {
      OPSCHED_RETURN_IF_ERROR(Launched(k::LaunchBiasActivation(p, kBlock, stream), "bias and activation"));
    }
    return absl::OkStatus();
  }
  // The column buffer (none for a 1x1 convolution reading x directly), then packed filters.
  static size_t Bytes(const Problem& p, int64_t images) {
    const size_t col = InputIsColumns(p) ? 0 : Floats(k::ColumnElements(p, images));
    return col + PackedFiltersBytes(p);
  }
  bool fused_;
};

// ---- Backward: dx and dw through GEMMs -------------------------------------------------------

class Conv2dBackwardCudaGemm : public Conv2dGpu {
 public:
  std::string_view op() const override { return "conv2d_backward"; }
  std::string_view name() const override { return "conv2d_backward_cuda_gemm"; }
  ImplementationTraits traits() const override {
    return {.deterministic = true, .vendor_library = true, .uses_cublas = true};
  }
  Status Applicable(const Workload& w, const Target&) const override {
    const Problem p = MakeProblem(w);
    OPSCHED_RETURN_IF_ERROR(ServesF32(p));
    if (RegionsOf(p, 1, 1).total > size_t(kMaxWorkspace)) {
      return absl::InvalidArgumentError(fmt::format(
          "one image's column buffer plus packed operands need {} bytes, over the 1 GiB workspace limit",
          RegionsOf(p, 1, 1).total));
    }
    return absl::OkStatus();
  }
  ConfigSpace Space(const Workload& w, const Target&) const override { return KnobsOf(w).Space(); }
  // 0 for a config that does not parse (Prepare reports it).
  size_t WorkspaceBytes(const Workload& w, const Config& c) const override {
    const StatusOr<BackwardKnobs> knobs = KnobsOf(w).Parse(c);
    return knobs.ok() ? RegionsOf(MakeProblem(w), knobs->images, knobs->streams).total : 0;
  }
  StatusOr<Runner> MakeRunner(const Workload& w, const Config& config) const override {
    OPSCHED_ASSIGN_OR_RETURN(const BackwardKnobs knobs, KnobsOf(w).Parse(config));
    return Runner([this, knobs](const Problem& p, const PreparedArgs& a) { return RunBound(p, knobs, a); });
  }

 private:
  // Images per GEMM; streams 2: dw on an auxiliary stream while dx runs on the caller's.
  struct BackwardKnobs {
    int64_t images = 1;
    int streams = 1;
  };
  static Knobs<BackwardKnobs> KnobsOf(const Workload& w) {
    const Problem p = MakeProblem(w);
    Knobs<BackwardKnobs> knobs;
    knobs.Int("images", &BackwardKnobs::images, ImageCounts(p.n))
        .Int("streams", &BackwardKnobs::streams, {1, 2})
        .Constrain("workspace (packed operands, one column buffer per stream) <= 1 GiB", [p](const BackwardKnobs& k) {
          return RegionsOf(p, k.images, k.streams).total <= size_t(kMaxWorkspace);
        });
    return knobs;
  }
  Status RunBound(const Problem& p, const BackwardKnobs& knobs, const PreparedArgs& a) const {
    const int64_t images = std::clamp<int64_t>(knobs.images, 1, std::max<int64_t>(p.n, 1));
    const int streams = knobs.streams == 2 ? 2 : 1;
    const Regions r = RegionsOf(p, images, streams);
    if (a.workspace_bytes < r.total) {
      return absl::InternalError(
          fmt::format("{}: workspace of {} bytes, needs {}", name(), a.workspace_bytes, r.total));
    }
    auto* base = static_cast<char*>(a.workspace);
    const auto at = [base](size_t offset) { return reinterpret_cast<float*>(base + offset); };
    const gpuStream_t main = StreamOf(a);
    // Operands both parts read are packed first, on the main stream, before the fork.
    OPSCHED_ASSIGN_OR_RETURN(const Matrix w, FilterMatrix(p, at(r.filters), main));
    OPSCHED_ASSIGN_OR_RETURN(const Matrix dy, GradientMatrix(p, at(r.gradient), main));
    if (streams == 1) {
      OPSCHED_ASSIGN_OR_RETURN(cublasHandle_t handle, cublas::Handle(main, 0));
      OPSCHED_RETURN_IF_ERROR(FilterGradient(p, dy, images, at(r.columns), handle, main));
      return DataGradient(p, w, dy, images, at(r.columns), handle, main);
    }
    // streams = 2: dw on the auxiliary stream (forked after the packing), dx meanwhile
    // on the main stream, which then waits for dw.
    return ForkJoin(
        main, name(),
        [&](cudaStream_t aux) -> Status {
          OPSCHED_ASSIGN_OR_RETURN(cublasHandle_t handle, cublas::Handle(aux, kAuxHandleSlot));
          return FilterGradient(p, dy, images, at(r.columns), handle, aux);
        },
        [&]() -> Status {
          OPSCHED_ASSIGN_OR_RETURN(cublasHandle_t handle, cublas::Handle(main, 0));
          return DataGradient(p, w, dy, images, at(r.columns_2), handle, main);
        });
  }

  // Byte offsets of the workspace regions: packed filters, packed dy, then one column
  // buffer (streams = 1: dw and dx take turns) or two (streams = 2: one per stream).
  struct Regions {
    size_t filters = 0, gradient = 0, columns = 0, columns_2 = 0, total = 0;
  };
  static Regions RegionsOf(const Problem& p, int64_t images, int64_t streams) {
    Regions r;
    r.filters = 0;
    r.gradient = r.filters + PackedFiltersBytes(p);
    r.columns = r.gradient + PackedGradientBytes(p);
    const size_t col = Floats(k::ColumnElements(p, images));
    r.columns_2 = streams == 2 ? r.columns + col : r.columns;
    r.total = r.columns_2 + col;
    return r;
  }

  // dw = sum over images of dy_g(n) x col_g(n)^T; the first GEMM writes (beta 0), the
  // rest accumulate, so dw is fully written whatever it held.
  Status FilterGradient(const Problem& p, const Matrix& dy, int64_t images, float* col, cublasHandle_t handle,
                        gpuStream_t stream) const {
    const int64_t kg = p.filters_per_group(), taps = p.reduction_length(), pq = p.p * p.q;
    float* dw = static_cast<float*>(p.dw);
    const Matrix cols = ColumnMatrix(p, col);
    if (p.n == 0) return Launched(cudaMemsetAsync(dw, 0, size_t(p.k * taps) * sizeof(float), stream), "zero dw");
    for (int64_t n0 = 0; n0 < p.n; n0 += images) {
      const int64_t count = std::min(images, p.n - n0);
      OPSCHED_RETURN_IF_ERROR(Launched(k::LaunchIm2col(p, n0, count, col, kBlock, stream), "im2col"));
      GemmCall g;
      g.m = taps, g.n = kg;
      g.c = dw, g.ldc = p.dw_strides[0], g.stride_c = kg * p.dw_strides[0];
      g.batch = p.groups;
      g.a = cols.data, g.lda = cols.ld, g.stride_a = cols.group_stride;
      g.b = dy.data + n0 * dy.image_stride, g.ldb = dy.ld, g.stride_b = dy.group_stride;
      if (p.layout == Layout::kNchw) {  // one GEMM per image: k = P*Q
        g.ta = CUBLAS_OP_T, g.k = pq;
        for (int64_t i = 0; i < count; ++i) {
          GemmCall one = g;
          one.a = cols.data + i * cols.image_stride;
          one.b = g.b + i * dy.image_stride;
          one.beta = n0 + i == 0 ? 0.0f : 1.0f;
          OPSCHED_RETURN_IF_ERROR(RunGemm(handle, p.math, one));
        }
      } else {  // the chunk's pixels are one reduction: k = images*P*Q
        g.tb = CUBLAS_OP_T, g.k = count * pq;
        g.beta = n0 == 0 ? 0.0f : 1.0f;
        OPSCHED_RETURN_IF_ERROR(RunGemm(handle, p.math, g));
      }
    }
    return absl::OkStatus();
  }

  // dcol_g(n) = w_g^T x dy_g(n), then col2im gathers each dx element's taps.
  Status DataGradient(const Problem& p, const Matrix& w, const Matrix& dy, int64_t images, float* col,
                      cublasHandle_t handle, gpuStream_t stream) const {
    const int64_t kg = p.filters_per_group(), taps = p.reduction_length(), pq = p.p * p.q;
    const Matrix cols = ColumnMatrix(p, col);
    for (int64_t n0 = 0; n0 < p.n; n0 += images) {
      const int64_t count = std::min(images, p.n - n0);
      GemmCall g;
      g.k = kg;
      g.batch = p.groups;
      g.c = col, g.ldc = cols.ld, g.stride_c = cols.group_stride;
      const float* dy0 = dy.data + n0 * dy.image_stride;
      if (p.layout == Layout::kNchw) {
        g.m = pq, g.n = taps;
        g.a = dy0, g.lda = dy.ld, g.stride_a = dy.group_stride;
        g.tb = CUBLAS_OP_T, g.b = w.data, g.ldb = w.ld, g.stride_b = w.group_stride;
        g.outer = count, g.outer_a = dy.image_stride, g.outer_b = 0, g.outer_c = cols.image_stride;
      } else {
        g.m = taps, g.n = count * pq;
        g.a = w.data, g.lda = w.ld, g.stride_a = w.group_stride;
        g.b = dy0, g.ldb = dy.ld, g.stride_b = dy.group_stride;
      }
      OPSCHED_RETURN_IF_ERROR(RunGemm(handle, p.math, g));
      OPSCHED_RETURN_IF_ERROR(Launched(k::LaunchCol2im(p, n0, count, col, kBlock, stream), "col2im"));
    }
    return absl::OkStatus();
  }
};

}  // namespace

Status RegisterCudaImpls(Registry& registry) {
  OPSCHED_RETURN_IF_ERROR(registry.AddImplementation(std::make_unique<Conv2dBackwardCudaGemm>()));
  for (bool fused : {false, true}) {
    OPSCHED_RETURN_IF_ERROR(registry.AddImplementation(std::make_unique<Conv2dCudaDirect>(fused)));
    OPSCHED_RETURN_IF_ERROR(registry.AddImplementation(std::make_unique<Conv2dCudaImplicitGemm>(fused)));
    OPSCHED_RETURN_IF_ERROR(registry.AddImplementation(std::make_unique<Conv2dCudaIm2colGemm>(fused)));
  }
  return absl::OkStatus();
}

}  // namespace opsched::conv2d
