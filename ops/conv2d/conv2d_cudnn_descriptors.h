// What the conv2d cuDNN externs share (conv2d_cudnn.cc, conv2d_cudnn_backward.cc): the
// legacy-API descriptors of one Problem, the stable names of cuDNN's algorithms, and the
// per-workload query of which algorithms cuDNN supports and how much workspace each
// needs. An algorithm enters a config space only when its workspace query succeeds for
// the problem, so an algorithm cuDNN cannot run on a shape is "not applicable", never a
// failed trial.
#pragma once

#include <cudnn.h>

#include <cstddef>
#include <optional>
#include <string_view>
#include <vector>

#include "core/status.h"
#include "core/workload.h"
#include "ops/conv2d/conv2d_params.h"

namespace opsched::conv2d {

// RAII for the descriptors of one cuDNN call. Init builds those the problem's kind uses:
// x, w (filter; also serves dw), the convolution and y (dy for kBackward) always; the
// bias and activation for kBiasActivation; dx for kBackward.
class CudnnDescriptors {
 public:
  CudnnDescriptors() = default;
  CudnnDescriptors(const CudnnDescriptors&) = delete;
  CudnnDescriptors& operator=(const CudnnDescriptors&) = delete;
  ~CudnnDescriptors();

  // Errors when a size or stride does not fit cuDNN's int, when cuDNN rejects a
  // descriptor, or when cuDNN's output size differs from the problem's p, q.
  Status Init(const Problem& p);

  cudnnTensorDescriptor_t x() const { return x_; }
  cudnnFilterDescriptor_t w() const { return w_; }
  cudnnConvolutionDescriptor_t conv() const { return conv_; }
  cudnnTensorDescriptor_t y() const { return y_; }  // y, or dy for kBackward
  cudnnTensorDescriptor_t dx() const { return dx_; }
  cudnnTensorDescriptor_t bias() const { return bias_; }
  cudnnActivationDescriptor_t act() const { return act_; }

 private:
  cudnnTensorDescriptor_t x_ = nullptr;
  cudnnFilterDescriptor_t w_ = nullptr;
  cudnnConvolutionDescriptor_t conv_ = nullptr;
  cudnnTensorDescriptor_t y_ = nullptr;
  cudnnTensorDescriptor_t dx_ = nullptr;
  cudnnTensorDescriptor_t bias_ = nullptr;
  cudnnActivationDescriptor_t act_ = nullptr;
};

// The cuDNN data type of the problem's tensors (legacy and graph APIs alike).
cudnnDataType_t CudnnDataType(ElementType type);

// Checks every cuDNN conv2d implementation makes before asking cuDNN anything:
// non-empty tensors, non-negative strides, a filter packed in the layout's format (the
// filter descriptor has no strides).
Status CheckCudnnProblem(const Problem& p);

// Stable algorithm names (persisted in records: never rename one). The knob values of
// the cuDNN implementations.
std::string_view AlgoName(cudnnConvolutionFwdAlgo_t algo);
std::string_view AlgoName(cudnnConvolutionBwdDataAlgo_t algo);
std::string_view AlgoName(cudnnConvolutionBwdFilterAlgo_t algo);
StatusOr<cudnnConvolutionFwdAlgo_t> ParseForwardAlgo(std::string_view name);
StatusOr<cudnnConvolutionBwdDataAlgo_t> ParseBackwardDataAlgo(std::string_view name);
StatusOr<cudnnConvolutionBwdFilterAlgo_t> ParseBackwardFilterAlgo(std::string_view name);

// cuDNN documents BWD_DATA_ALGO_0 and BWD_FILTER_ALGO_0 / ALGO_3 as non-deterministic
// (they accumulate with atomics); every forward algorithm is deterministic.
bool IsDeterministic(cudnnConvolutionBwdDataAlgo_t algo);
bool IsDeterministic(cudnnConvolutionBwdFilterAlgo_t algo);

// One algorithm cuDNN supports for a problem, with the workspace it needs.
template <typename Algo>
struct SupportedAlgo {
  Algo algo;
  size_t workspace_bytes = 0;
};

// The algorithms cuDNN supports for one workload, in enum order: forward for conv2d and
// conv2d_bias_act, backward data and filter for conv2d_backward (the others empty).
struct AlgoQuery {
  std::vector<SupportedAlgo<cudnnConvolutionFwdAlgo_t>> forward;
  std::vector<SupportedAlgo<cudnnConvolutionBwdDataAlgo_t>> backward_data;
  std::vector<SupportedAlgo<cudnnConvolutionBwdFilterAlgo_t>> backward_filter;
  // cuDNN's own heuristic choice (cudnnGetConvolution*Algorithm_v7, what PyTorch runs
  // with cudnn.benchmark off): its first suggestion that is supported here.
  std::optional<cudnnConvolutionFwdAlgo_t> heuristic_forward;
  std::optional<cudnnConvolutionBwdDataAlgo_t> heuristic_backward_data;
  std::optional<cudnnConvolutionBwdFilterAlgo_t> heuristic_backward_filter;

  // The workspace of a supported algorithm; nullopt when cuDNN does not support it here.
  std::optional<size_t> Workspace(cudnnConvolutionFwdAlgo_t algo) const;
  std::optional<size_t> Workspace(cudnnConvolutionBwdDataAlgo_t algo) const;
  std::optional<size_t> Workspace(cudnnConvolutionBwdFilterAlgo_t algo) const;
};

// The query for a canonical conv2d-family workload on the calling thread's current CUDA
// device: asked of cuDNN on first use, then served from a process-wide cache (workload
// hash and device -> query) so Space, WorkspaceBytes and Run stay cheap. Failures (no
// device, descriptors cuDNN rejects, an unexpected cuDNN error) are returned, not
// cached. The pointer stays valid for the life of the process.
StatusOr<const AlgoQuery*> QueryAlgorithms(const Workload& canonical);

}  // namespace opsched::conv2d
