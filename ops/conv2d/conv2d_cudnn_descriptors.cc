#include "ops/conv2d/conv2d_cudnn_descriptors.h"

#include <array>
#include <climits>
#include <span>
#include <utility>

#include "core/format.h"
#include "core/gpu/gpu_status.h"
#include "extern/cudnn/cudnn_handle.h"
#include "ops/conv2d/conv2d_def.h"
#include "ops/conv2d/conv2d_query_cache.h"

// The legacy convolution API (cudnn_cnn.h) is deprecated in cuDNN 9 but still present.
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"

namespace opsched::conv2d {
namespace {

template <typename Algo>
struct NamedAlgo {
  Algo algo;
  std::string_view name;
};

// Persisted in records: append, never rename. BWD_FILTER_ALGO_WINOGRAD is absent because
// cuDNN never implemented it.
constexpr NamedAlgo<cudnnConvolutionFwdAlgo_t> kForwardAlgos[] = {
    {CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_GEMM, "implicit_gemm"},
    {CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_PRECOMP_GEMM, "implicit_precomp_gemm"},
    {CUDNN_CONVOLUTION_FWD_ALGO_GEMM, "gemm"},
    {CUDNN_CONVOLUTION_FWD_ALGO_DIRECT, "direct"},
    {CUDNN_CONVOLUTION_FWD_ALGO_FFT, "fft"},
    {CUDNN_CONVOLUTION_FWD_ALGO_FFT_TILING, "fft_tiling"},
    {CUDNN_CONVOLUTION_FWD_ALGO_WINOGRAD, "winograd"},
    {CUDNN_CONVOLUTION_FWD_ALGO_WINOGRAD_NONFUSED, "winograd_nonfused"},
};
constexpr NamedAlgo<cudnnConvolutionBwdDataAlgo_t> kBackwardDataAlgos[] = {
    {CUDNN_CONVOLUTION_BWD_DATA_ALGO_0, "algo_0"},
    {CUDNN_CONVOLUTION_BWD_DATA_ALGO_1, "algo_1"},
    {CUDNN_CONVOLUTION_BWD_DATA_ALGO_FFT, "fft"},
    {CUDNN_CONVOLUTION_BWD_DATA_ALGO_FFT_TILING, "fft_tiling"},
    {CUDNN_CONVOLUTION_BWD_DATA_ALGO_WINOGRAD, "winograd"},
    {CUDNN_CONVOLUTION_BWD_DATA_ALGO_WINOGRAD_NONFUSED, "winograd_nonfused"},
};
constexpr NamedAlgo<cudnnConvolutionBwdFilterAlgo_t> kBackwardFilterAlgos[] = {
    {CUDNN_CONVOLUTION_BWD_FILTER_ALGO_0, "algo_0"},
    {CUDNN_CONVOLUTION_BWD_FILTER_ALGO_1, "algo_1"},
    {CUDNN_CONVOLUTION_BWD_FILTER_ALGO_FFT, "fft"},
    {CUDNN_CONVOLUTION_BWD_FILTER_ALGO_3, "algo_3"},
    {CUDNN_CONVOLUTION_BWD_FILTER_ALGO_WINOGRAD_NONFUSED, "winograd_nonfused"},
    {CUDNN_CONVOLUTION_BWD_FILTER_ALGO_FFT_TILING, "fft_tiling"},
};

template <typename Algo>
std::string_view NameIn(std::span<const NamedAlgo<Algo>> table, Algo algo) {
  for (const NamedAlgo<Algo>& entry : table) {
    if (entry.algo == algo) return entry.name;
  }
  return "unknown";
}

template <typename Algo>
StatusOr<Algo> ParseIn(std::span<const NamedAlgo<Algo>> table, std::string_view name, std::string_view what) {
  for (const NamedAlgo<Algo>& entry : table) {
    if (entry.name == name) return entry.algo;
  }
  return absl::InvalidArgumentError(fmt::format("unknown cuDNN {} algorithm \"{}\"", what, name));
}


// fp32 keeps f32 products exact (FMA kernels only); tf32 is cuDNN's default math, which
// lets tensor cores round f32 inputs to TF32 (ALLOW_CONVERSION would go further, down
// to f16, which fp32-range data may overflow). f16 and bf16 products are exact in f32,
// so tensor cores lose nothing there.
cudnnMathType_t MathType(const Problem& p) {
  if (p.type != ElementType::kF32) return CUDNN_TENSOR_OP_MATH;
  return p.math == Math::kFp32 ? CUDNN_FMA_MATH : CUDNN_DEFAULT_MATH;
}

cudnnActivationMode_t ActivationMode(Activation act) {
  switch (act) {
    case Activation::kRelu:
      return CUDNN_ACTIVATION_RELU;
    case Activation::kSigmoid:
      return CUDNN_ACTIVATION_SIGMOID;
    case Activation::kTanh:
      return CUDNN_ACTIVATION_TANH;
    default:
      return CUDNN_ACTIVATION_IDENTITY;
  }
}

// The legacy descriptors take int sizes and strides.
Status CheckFitsInt(std::string_view what, std::span<const int64_t> values) {
  for (int64_t v : values) {
    if (v > INT_MAX) return absl::InvalidArgumentError(fmt::format("cuDNN takes 32-bit {}: {} is too large", what, v));
  }
  return absl::OkStatus();
}

// A 4-d tensor with logical (n, c, h, w) sizes and element strides.
Status SetTensor(cudnnTensorDescriptor_t* desc, cudnnDataType_t type, std::span<const int64_t, 4> dims,
                 std::span<const int64_t, 4> strides, std::string_view name) {
  OPSCHED_RETURN_IF_ERROR(Annotate(CheckFitsInt("sizes", dims), name));
  OPSCHED_RETURN_IF_ERROR(Annotate(CheckFitsInt("strides", strides), name));
  OPSCHED_CUDNN_RETURN_IF_ERROR(cudnnCreateTensorDescriptor(desc));
  auto i = [](int64_t v) { return static_cast<int>(v); };
  return Annotate(cudnn::ToStatus(cudnnSetTensor4dDescriptorEx(*desc, type, i(dims[0]), i(dims[1]), i(dims[2]),
                                                               i(dims[3]), i(strides[0]), i(strides[1]),
                                                               i(strides[2]), i(strides[3])),
                                  "cudnnSetTensor4dDescriptorEx"),
                  name);
}

// The strides of a filter packed in the layout's format, in logical (k, c, r, s) order.
std::array<int64_t, 4> PackedFilterStrides(const Problem& p) {
  const int64_t cg = p.channels_per_group();
  if (p.layout == Layout::kNhwc) return {p.r * p.s * cg, 1, p.s * cg, cg};  // [K,R,S,C/G]
  return {cg * p.r * p.s, p.r * p.s, p.s, 1};                                // [K,C/G,R,S]
}

// SUCCESS: supported. NOT_SUPPORTED or BAD_PARAM (with cuDNN 9's refinements of either):
// cuDNN cannot run this algorithm on this problem, so it is left out of the space.
// Anything else is a real failure of the query.
enum class Support { kSupported, kUnsupported, kError };
Support Classify(cudnnStatus_t status) {
  if (status == CUDNN_STATUS_SUCCESS) return Support::kSupported;
#if CUDNN_MAJOR >= 9
  const int category = CUDNN_STATUS_CATEGORY(status);
#else
  const int category = status;
#endif
  return category == CUDNN_STATUS_NOT_SUPPORTED || category == CUDNN_STATUS_BAD_PARAM ? Support::kUnsupported
                                                                                       : Support::kError;
}

// Asks `workspace_size(algo, &bytes)` for every algorithm of `table`, keeping the
// supported ones.
template <typename Algo, typename WorkspaceSize>
Status Collect(std::span<const NamedAlgo<Algo>> table, std::string_view call, WorkspaceSize workspace_size,
               std::vector<SupportedAlgo<Algo>>* out) {
  for (const NamedAlgo<Algo>& entry : table) {
    size_t bytes = 0;
    const cudnnStatus_t status = workspace_size(entry.algo, &bytes);
    switch (Classify(status)) {
      case Support::kSupported:
        out->push_back({entry.algo, bytes});
        break;
      case Support::kUnsupported:
        break;
      case Support::kError:
        return Annotate(cudnn::ToStatus(status, call), entry.name);
    }
  }
  return absl::OkStatus();
}

// The first algorithm of cuDNN's heuristic ranking (perf results of a _v7 query) that
// succeeded and is among the supported ones.
template <typename Algo, typename Perf>
std::optional<Algo> FirstSupported(const Perf* perf, int returned, const std::vector<SupportedAlgo<Algo>>& supported) {
  for (int i = 0; i < returned; ++i) {
    if (perf[i].status != CUDNN_STATUS_SUCCESS) continue;
    for (const SupportedAlgo<Algo>& s : supported) {
      if (s.algo == perf[i].algo) return s.algo;
    }
  }
  return std::nullopt;
}

StatusOr<AlgoQuery> AskCudnn(const Problem& p) {
  CudnnDescriptors d;
  OPSCHED_RETURN_IF_ERROR(d.Init(p));
  OPSCHED_ASSIGN_OR_RETURN(cudnnHandle_t handle, cudnn::Handle(nullptr));
  AlgoQuery q;
  if (p.kind == Kind::kBackward) {
    OPSCHED_RETURN_IF_ERROR(Collect<cudnnConvolutionBwdDataAlgo_t>(
        kBackwardDataAlgos, "cudnnGetConvolutionBackwardDataWorkspaceSize",
        [&](cudnnConvolutionBwdDataAlgo_t algo, size_t* bytes) {
          return cudnnGetConvolutionBackwardDataWorkspaceSize(handle, d.w(), d.y(), d.conv(), d.dx(), algo, bytes);
        },
        &q.backward_data));
    OPSCHED_RETURN_IF_ERROR(Collect<cudnnConvolutionBwdFilterAlgo_t>(
        kBackwardFilterAlgos, "cudnnGetConvolutionBackwardFilterWorkspaceSize",
        [&](cudnnConvolutionBwdFilterAlgo_t algo, size_t* bytes) {
          return cudnnGetConvolutionBackwardFilterWorkspaceSize(handle, d.x(), d.y(), d.conv(), d.w(), algo, bytes);
        },
        &q.backward_filter));
    cudnnConvolutionBwdDataAlgoPerf_t data[CUDNN_CONVOLUTION_BWD_DATA_ALGO_COUNT];
    cudnnConvolutionBwdFilterAlgoPerf_t filter[CUDNN_CONVOLUTION_BWD_FILTER_ALGO_COUNT];
    int returned = 0;
    if (cudnnGetConvolutionBackwardDataAlgorithm_v7(handle, d.w(), d.y(), d.conv(), d.dx(),
                                                    CUDNN_CONVOLUTION_BWD_DATA_ALGO_COUNT, &returned,
                                                    data) == CUDNN_STATUS_SUCCESS) {
      q.heuristic_backward_data = FirstSupported(data, returned, q.backward_data);
    }
    if (cudnnGetConvolutionBackwardFilterAlgorithm_v7(handle, d.x(), d.y(), d.conv(), d.w(),
                                                      CUDNN_CONVOLUTION_BWD_FILTER_ALGO_COUNT, &returned,
                                                      filter) == CUDNN_STATUS_SUCCESS) {
      q.heuristic_backward_filter = FirstSupported(filter, returned, q.backward_filter);
    }
  } else {
    OPSCHED_RETURN_IF_ERROR(Collect<cudnnConvolutionFwdAlgo_t>(
        kForwardAlgos, "cudnnGetConvolutionForwardWorkspaceSize",
        [&](cudnnConvolutionFwdAlgo_t algo, size_t* bytes) {
          return cudnnGetConvolutionForwardWorkspaceSize(handle, d.x(), d.w(), d.conv(), d.y(), algo, bytes);
        },
        &q.forward));
    cudnnConvolutionFwdAlgoPerf_t perf[CUDNN_CONVOLUTION_FWD_ALGO_COUNT];
    int returned = 0;
    if (cudnnGetConvolutionForwardAlgorithm_v7(handle, d.x(), d.w(), d.conv(), d.y(), CUDNN_CONVOLUTION_FWD_ALGO_COUNT,
                                               &returned, perf) == CUDNN_STATUS_SUCCESS) {
      q.heuristic_forward = FirstSupported(perf, returned, q.forward);
    }
  }
  return q;
}

template <typename Algo>
std::optional<size_t> WorkspaceIn(const std::vector<SupportedAlgo<Algo>>& supported, Algo algo) {
  for (const SupportedAlgo<Algo>& s : supported) {
    if (s.algo == algo) return s.workspace_bytes;
  }
  return std::nullopt;
}

}  // namespace

cudnnDataType_t CudnnDataType(ElementType type) {
  switch (type) {
    case ElementType::kF16:
      return CUDNN_DATA_HALF;
    case ElementType::kBF16:
      return CUDNN_DATA_BFLOAT16;
    default:
      return CUDNN_DATA_FLOAT;
  }
}

CudnnDescriptors::~CudnnDescriptors() {
  if (x_ != nullptr) cudnnDestroyTensorDescriptor(x_);
  if (w_ != nullptr) cudnnDestroyFilterDescriptor(w_);
  if (conv_ != nullptr) cudnnDestroyConvolutionDescriptor(conv_);
  if (y_ != nullptr) cudnnDestroyTensorDescriptor(y_);
  if (dx_ != nullptr) cudnnDestroyTensorDescriptor(dx_);
  if (bias_ != nullptr) cudnnDestroyTensorDescriptor(bias_);
  if (act_ != nullptr) cudnnDestroyActivationDescriptor(act_);
}

Status CudnnDescriptors::Init(const Problem& p) {
  const cudnnDataType_t type = CudnnDataType(p.type);
  const int64_t x_dims[4] = {p.n, p.c, p.h, p.w};
  const int64_t y_dims[4] = {p.n, p.k, p.p, p.q};
  OPSCHED_RETURN_IF_ERROR(SetTensor(&x_, type, x_dims, p.x_strides, "x"));
  OPSCHED_RETURN_IF_ERROR(SetTensor(&y_, type, y_dims, p.y_strides, p.kind == Kind::kBackward ? "dy" : "y"));
  if (p.kind == Kind::kBackward) OPSCHED_RETURN_IF_ERROR(SetTensor(&dx_, type, x_dims, p.dx_strides, "dx"));

  // The filter descriptor has no strides: cuDNN reads w (and writes dw) packed in the
  // layout's format, which CheckCudnnProblem ensures.
  const int64_t w_dims[4] = {p.k, p.channels_per_group(), p.r, p.s};
  OPSCHED_RETURN_IF_ERROR(Annotate(CheckFitsInt("sizes", w_dims), "w"));
  OPSCHED_CUDNN_RETURN_IF_ERROR(cudnnCreateFilterDescriptor(&w_));
  OPSCHED_CUDNN_RETURN_IF_ERROR(cudnnSetFilter4dDescriptor(
      w_, type, p.layout == Layout::kNhwc ? CUDNN_TENSOR_NHWC : CUDNN_TENSOR_NCHW, static_cast<int>(p.k),
      static_cast<int>(p.channels_per_group()), static_cast<int>(p.r), static_cast<int>(p.s)));

  const int64_t conv_params[] = {p.pad_h, p.pad_w, p.stride_h, p.stride_w, p.dil_h, p.dil_w, p.groups};
  OPSCHED_RETURN_IF_ERROR(CheckFitsInt("convolution parameters", conv_params));
  OPSCHED_CUDNN_RETURN_IF_ERROR(cudnnCreateConvolutionDescriptor(&conv_));
  // Accumulation is f32 for every data type (f16 and bf16 are cuDNN's "pseudo" configs).
  OPSCHED_CUDNN_RETURN_IF_ERROR(cudnnSetConvolution2dDescriptor(
      conv_, static_cast<int>(p.pad_h), static_cast<int>(p.pad_w), static_cast<int>(p.stride_h),
      static_cast<int>(p.stride_w), static_cast<int>(p.dil_h), static_cast<int>(p.dil_w), CUDNN_CROSS_CORRELATION,
      CUDNN_DATA_FLOAT));
  OPSCHED_CUDNN_RETURN_IF_ERROR(cudnnSetConvolutionGroupCount(conv_, static_cast<int>(p.groups)));
  OPSCHED_CUDNN_RETURN_IF_ERROR(cudnnSetConvolutionMathType(conv_, MathType(p)));

  // A disagreement about the output size would make cuDNN read or write out of bounds.
  int n = 0, k = 0, out_h = 0, out_w = 0;
  OPSCHED_CUDNN_RETURN_IF_ERROR(cudnnGetConvolution2dForwardOutputDim(conv_, x_, w_, &n, &k, &out_h, &out_w));
  if (n != p.n || k != p.k || out_h != p.p || out_w != p.q) {
    return absl::InternalError(fmt::format("cuDNN's output is [{},{},{},{}] (n,k,p,q), the problem's [{},{},{},{}]", n,
                                           k, out_h, out_w, p.n, p.k, p.p, p.q));
  }

  if (p.kind == Kind::kBiasActivation) {
    // b[k] as a [1,K,1,1] tensor broadcast over n, p, q.
    const int64_t b_dims[4] = {1, p.k, 1, 1};
    const int64_t b_strides[4] = {p.k * p.b_stride, p.b_stride, 1, 1};
    OPSCHED_RETURN_IF_ERROR(SetTensor(&bias_, type, b_dims, b_strides, "b"));
    OPSCHED_CUDNN_RETURN_IF_ERROR(cudnnCreateActivationDescriptor(&act_));
    // NaN propagates, as in the reference's relu; the coefficient only matters for
    // clipped relu and elu.
    OPSCHED_CUDNN_RETURN_IF_ERROR(
        cudnnSetActivationDescriptor(act_, ActivationMode(p.act), CUDNN_PROPAGATE_NAN, /*coef=*/0.0));
  }
  return absl::OkStatus();
}

Status CheckCudnnProblem(const Problem& p) {
  if (p.n == 0 || p.c == 0 || p.k == 0 || p.h == 0 || p.w == 0 || p.p == 0 || p.q == 0) {
    return absl::InvalidArgumentError("cuDNN needs non-empty tensors");
  }
  for (const int64_t* strides : {p.x_strides, p.w_strides, p.y_strides, p.dx_strides, p.dw_strides}) {
    for (int d = 0; d < 4; ++d) {
      if (strides[d] < 0) return absl::InvalidArgumentError("cuDNN needs non-negative strides");
    }
  }
  // A size-1 dimension's stride is never used, so any value is packed.
  const int64_t dims[4] = {p.k, p.channels_per_group(), p.r, p.s};
  const std::array<int64_t, 4> packed = PackedFilterStrides(p);
  for (int d = 0; d < 4; ++d) {
    if (dims[d] > 1 && p.w_strides[d] != packed[d]) {
      return absl::InvalidArgumentError(
          fmt::format("cuDNN's filter descriptor has no strides: needs w packed as {}",
                      p.layout == Layout::kNhwc ? "[K,R,S,C/G]" : "[K,C/G,R,S]"));
    }
  }
  return absl::OkStatus();
}

std::string_view AlgoName(cudnnConvolutionFwdAlgo_t algo) {
  return NameIn<cudnnConvolutionFwdAlgo_t>(kForwardAlgos, algo);
}
std::string_view AlgoName(cudnnConvolutionBwdDataAlgo_t algo) {
  return NameIn<cudnnConvolutionBwdDataAlgo_t>(kBackwardDataAlgos, algo);
}
std::string_view AlgoName(cudnnConvolutionBwdFilterAlgo_t algo) {
  return NameIn<cudnnConvolutionBwdFilterAlgo_t>(kBackwardFilterAlgos, algo);
}
StatusOr<cudnnConvolutionFwdAlgo_t> ParseForwardAlgo(std::string_view name) {
  return ParseIn<cudnnConvolutionFwdAlgo_t>(kForwardAlgos, name, "forward");
}
StatusOr<cudnnConvolutionBwdDataAlgo_t> ParseBackwardDataAlgo(std::string_view name) {
  return ParseIn<cudnnConvolutionBwdDataAlgo_t>(kBackwardDataAlgos, name, "backward data");
}
StatusOr<cudnnConvolutionBwdFilterAlgo_t> ParseBackwardFilterAlgo(std::string_view name) {
  return ParseIn<cudnnConvolutionBwdFilterAlgo_t>(kBackwardFilterAlgos, name, "backward filter");
}

bool IsDeterministic(cudnnConvolutionBwdDataAlgo_t algo) { return algo != CUDNN_CONVOLUTION_BWD_DATA_ALGO_0; }
bool IsDeterministic(cudnnConvolutionBwdFilterAlgo_t algo) {
  return algo != CUDNN_CONVOLUTION_BWD_FILTER_ALGO_0 && algo != CUDNN_CONVOLUTION_BWD_FILTER_ALGO_3;
}

std::optional<size_t> AlgoQuery::Workspace(cudnnConvolutionFwdAlgo_t algo) const {
  return WorkspaceIn(forward, algo);
}
std::optional<size_t> AlgoQuery::Workspace(cudnnConvolutionBwdDataAlgo_t algo) const {
  return WorkspaceIn(backward_data, algo);
}
std::optional<size_t> AlgoQuery::Workspace(cudnnConvolutionBwdFilterAlgo_t algo) const {
  return WorkspaceIn(backward_filter, algo);
}

StatusOr<const AlgoQuery*> QueryAlgorithms(const Workload& canonical) {
  // Keyed by (device, workload hash): support can differ between GPUs.
  static auto* cache = new DeviceQueryCache<AlgoQuery>();
  return cache->Get(canonical.hash(), "cuDNN conv2d algorithm query",
                    [&] { return AskCudnn(MakeProblem(canonical)); });
}

}  // namespace opsched::conv2d
