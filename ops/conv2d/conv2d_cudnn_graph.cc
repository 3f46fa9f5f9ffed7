// The cuDNN graph (backend) API, plain C (cudnn_graph.h), for the conv2d externs of
// conv2d_cudnn_graph_impls.cc: engine queries and plans cached per thread.
//
// What a call costs once warm: a lookup in a thread-local plan cache, then
// cudnnBackendExecute with the plan's variant pack, which is rebuilt only when the
// pointers differ from the previous call's. Building the descriptors, the operation
// graph, the engine, its config and the plan happens once per (handle, operation,
// workload, engine, alignment).
#include "ops/conv2d/conv2d_cudnn_graph.h"

#include <algorithm>
#include <cstdint>
#include <initializer_list>
#include <memory>
#include <string>
#include <tuple>
#include <utility>

#include "absl/container/flat_hash_map.h"
#include "core/format.h"
#include "core/gpu/gpu_status.h"
#include "extern/cudnn/cudnn_handle.h"
#include "ops/conv2d/conv2d_cudnn_descriptors.h"
#include "ops/conv2d/conv2d_def.h"
#include "ops/conv2d/conv2d_reference.h"
#include "ops/conv2d/conv2d_query_cache.h"
#include "registry/registry.h"

// cuDNN 9.19 marks CUDNN_ATTR_OPERATIONGRAPH_HANDLE and CUDNN_ATTR_EXECUTION_PLAN_HANDLE
// deprecated (a warning only under CUDNN_WARN_DEPRECATED) but still takes them; they bind
// the graph and the plan to the handle the plan cache keys them by.
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"

namespace opsched::conv2d {
namespace {

// Unique ids of the tensors, in operation graphs and variant packs alike.
constexpr int64_t kUidX = 1;
constexpr int64_t kUidW = 2;
constexpr int64_t kUidDy = 3;  // y for the forward operation
constexpr int64_t kUidDx = 4;
constexpr int64_t kUidDw = 5;

// The alignment a plan claims when every pointer of the call has it: engines with
// vectorised loads need it. Smaller alignments claim the element size.
constexpr int64_t kPreferredAlignment = 16;

template <typename T>
StatusOr<T> AnnotateOr(StatusOr<T> result, std::string_view context) {
  if (!result.ok()) return Annotate(result.status(), context);
  return result;
}

// ---------------------------------------------------------------------------------------
// Backend descriptors and their attributes.

// Owns one backend descriptor, so that no error path leaks one.
class BackendDescriptor {
 public:
  BackendDescriptor() = default;
  BackendDescriptor(const BackendDescriptor&) = delete;
  BackendDescriptor& operator=(const BackendDescriptor&) = delete;
  BackendDescriptor(BackendDescriptor&& other) noexcept : desc_(std::exchange(other.desc_, nullptr)) {}
  BackendDescriptor& operator=(BackendDescriptor&& other) noexcept {
    if (this != &other) {
      Reset();
      desc_ = std::exchange(other.desc_, nullptr);
    }
    return *this;
  }
  ~BackendDescriptor() { Reset(); }

  static StatusOr<BackendDescriptor> Create(cudnnBackendDescriptorType_t type) {
    cudnnBackendDescriptor_t desc = nullptr;
    OPSCHED_CUDNN_RETURN_IF_ERROR(cudnnBackendCreateDescriptor(type, &desc));
    BackendDescriptor owned;
    owned.desc_ = desc;
    return owned;
  }

  cudnnBackendDescriptor_t get() const { return desc_; }
  // Attributes of CUDNN_TYPE_BACKEND_DESCRIPTOR take an array of descriptors: this is
  // an array of one.
  const cudnnBackendDescriptor_t* array() const { return &desc_; }

 private:
  void Reset() {
    if (desc_ != nullptr) cudnnBackendDestroyDescriptor(desc_);
    desc_ = nullptr;
  }

  cudnnBackendDescriptor_t desc_ = nullptr;
};

// cudnnBackendSetAttribute; an error names the attribute (`what`).
Status SetAttribute(const BackendDescriptor& desc, cudnnBackendAttributeName_t name, std::string_view what,
                    cudnnBackendAttributeType_t type, int64_t count, const void* values) {
  const cudnnStatus_t status = cudnnBackendSetAttribute(desc.get(), name, type, count, values);
  if (status == CUDNN_STATUS_SUCCESS) return absl::OkStatus();
  return cudnn::ToStatus(status, fmt::format("cudnnBackendSetAttribute({})", what));
}

// SetAttribute of a literal attribute name, named by its enumerator.
#define OPSCHED_SET_ATTRIBUTE(desc, name, type, count, values) \
  OPSCHED_RETURN_IF_ERROR(SetAttribute((desc), name, #name, type, (count), (values)))

Status Finalize(const BackendDescriptor& desc, std::string_view what) {
  const cudnnStatus_t status = cudnnBackendFinalize(desc.get());
  if (status == CUDNN_STATUS_SUCCESS) return absl::OkStatus();
  return cudnn::ToStatus(status, fmt::format("cudnnBackendFinalize({})", what));
}

StatusOr<int64_t> GetInt64(const BackendDescriptor& desc, cudnnBackendAttributeName_t name, std::string_view what) {
  int64_t value = 0;
  int64_t count = 0;
  const cudnnStatus_t status = cudnnBackendGetAttribute(desc.get(), name, CUDNN_TYPE_INT64, 1, &count, &value);
  if (status != CUDNN_STATUS_SUCCESS) {
    return cudnn::ToStatus(status, fmt::format("cudnnBackendGetAttribute({})", what));
  }
  if (count != 1) {
    return absl::InternalError(fmt::format("cudnnBackendGetAttribute({}) returned {} values", what, count));
  }
  return value;
}

// The notes (numerical or behavior) of an engine as a bit set: bit v for note value v.
template <typename Note>
StatusOr<uint32_t> NoteBits(const BackendDescriptor& engine, cudnnBackendAttributeName_t name, std::string_view what,
                            cudnnBackendAttributeType_t type, int64_t type_count) {
  std::array<Note, 32> notes{};
  const int64_t requested = std::min<int64_t>(type_count, static_cast<int64_t>(notes.size()));
  int64_t count = 0;
  const cudnnStatus_t status = cudnnBackendGetAttribute(engine.get(), name, type, requested, &count, notes.data());
  if (status != CUDNN_STATUS_SUCCESS) {
    return cudnn::ToStatus(status, fmt::format("cudnnBackendGetAttribute({})", what));
  }
  uint32_t bits = 0;
  for (int64_t i = 0; i < std::clamp<int64_t>(count, 0, requested); ++i) {
    const auto value = static_cast<uint32_t>(notes[static_cast<size_t>(i)]);
    if (value < 32) bits |= 1u << value;
  }
  return bits;
}

constexpr uint32_t Bit(int note) { return 1u << note; }

// ---------------------------------------------------------------------------------------
// One operation of a problem as an operation graph.

// A tensor of an operation: its unique id, logical (n, c, h, w) / (k, c, r, s) sizes and
// element strides (the graph API takes dims in logical order, the layout in the
// strides), and the operation's attribute that takes it.
struct TensorSpec {
  int64_t uid;
  std::string_view name;
  std::array<int64_t, 4> dims;
  const int64_t* strides;  // 4, into the Problem
  cudnnBackendAttributeName_t attribute;
};

// An operation descriptor's type, its scalar and convolution attributes and its three
// tensors, in the order of OperationPointers.
struct OperationSpec {
  cudnnBackendDescriptorType_t type;
  cudnnBackendAttributeName_t alpha;
  cudnnBackendAttributeName_t beta;
  cudnnBackendAttributeName_t conv;
  std::array<TensorSpec, 3> tensors;
};

// Groups need no attribute: the graph API infers G from x's C over w's C (C/G).
OperationSpec SpecOf(const Problem& p, GraphOp op) {
  const std::array<int64_t, 4> x_dims = {p.n, p.c, p.h, p.w};
  const std::array<int64_t, 4> w_dims = {p.k, p.channels_per_group(), p.r, p.s};
  const std::array<int64_t, 4> y_dims = {p.n, p.k, p.p, p.q};
  switch (op) {
    case GraphOp::kBackwardData:
      return {CUDNN_BACKEND_OPERATION_CONVOLUTION_BACKWARD_DATA_DESCRIPTOR,
              CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_DATA_ALPHA,
              CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_DATA_BETA,
              CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_DATA_CONV_DESC,
              {{{kUidDy, "dy", y_dims, p.y_strides, CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_DATA_DY},
                {kUidW, "w", w_dims, p.w_strides, CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_DATA_W},
                {kUidDx, "dx", x_dims, p.dx_strides, CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_DATA_DX}}}};
    case GraphOp::kBackwardFilter:
      return {CUDNN_BACKEND_OPERATION_CONVOLUTION_BACKWARD_FILTER_DESCRIPTOR,
              CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_FILTER_ALPHA,
              CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_FILTER_BETA,
              CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_FILTER_CONV_DESC,
              {{{kUidX, "x", x_dims, p.x_strides, CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_FILTER_X},
                {kUidDy, "dy", y_dims, p.y_strides, CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_FILTER_DY},
                {kUidDw, "dw", w_dims, p.dw_strides, CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_FILTER_DW}}}};
    default:
      return {CUDNN_BACKEND_OPERATION_CONVOLUTION_FORWARD_DESCRIPTOR,
              CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_ALPHA,
              CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_BETA,
              CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_CONV_DESC,
              {{{kUidX, "x", x_dims, p.x_strides, CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_X},
                {kUidW, "w", w_dims, p.w_strides, CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_W},
                {kUidDy, "y", y_dims, p.y_strides, CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_Y}}}};
  }
}

// The data pointers of an operation, in SpecOf's tensor order. The variant pack takes
// void* for inputs and outputs alike.
std::array<void*, 3> OperationPointers(const Problem& p, GraphOp op) {
  void* const x = const_cast<void*>(p.x);
  void* const w = const_cast<void*>(p.wt);
  switch (op) {
    case GraphOp::kBackwardData:
      return {p.y, w, p.dx};  // p.y holds dy
    case GraphOp::kBackwardFilter:
      return {x, p.y, p.dw};
    default:
      return {x, w, p.y};
  }
}

std::array<int64_t, 3> OperationUids(const OperationSpec& spec) {
  return {spec.tensors[0].uid, spec.tensors[1].uid, spec.tensors[2].uid};
}

StatusOr<BackendDescriptor> BuildTensor(const TensorSpec& t, cudnnDataType_t type, int64_t alignment) {
  OPSCHED_ASSIGN_OR_RETURN(BackendDescriptor desc, BackendDescriptor::Create(CUDNN_BACKEND_TENSOR_DESCRIPTOR));
  OPSCHED_SET_ATTRIBUTE(desc, CUDNN_ATTR_TENSOR_DATA_TYPE, CUDNN_TYPE_DATA_TYPE, 1, &type);
  OPSCHED_SET_ATTRIBUTE(desc, CUDNN_ATTR_TENSOR_DIMENSIONS, CUDNN_TYPE_INT64, 4, t.dims.data());
  OPSCHED_SET_ATTRIBUTE(desc, CUDNN_ATTR_TENSOR_STRIDES, CUDNN_TYPE_INT64, 4, t.strides);
  OPSCHED_SET_ATTRIBUTE(desc, CUDNN_ATTR_TENSOR_UNIQUE_ID, CUDNN_TYPE_INT64, 1, &t.uid);
  OPSCHED_SET_ATTRIBUTE(desc, CUDNN_ATTR_TENSOR_BYTE_ALIGNMENT, CUDNN_TYPE_INT64, 1, &alignment);
  OPSCHED_RETURN_IF_ERROR(Finalize(desc, "tensor"));
  return desc;
}

// Cross-correlation (what every framework calls convolution), accumulated in f32 for
// every data type, with symmetric padding.
StatusOr<BackendDescriptor> BuildConvolution(const Problem& p) {
  OPSCHED_ASSIGN_OR_RETURN(BackendDescriptor desc, BackendDescriptor::Create(CUDNN_BACKEND_CONVOLUTION_DESCRIPTOR));
  const cudnnDataType_t compute_type = CUDNN_DATA_FLOAT;
  const cudnnConvolutionMode_t mode = CUDNN_CROSS_CORRELATION;
  const int64_t spatial_dims = 2;
  const int64_t dilations[2] = {p.dil_h, p.dil_w};
  const int64_t strides[2] = {p.stride_h, p.stride_w};
  const int64_t paddings[2] = {p.pad_h, p.pad_w};
  OPSCHED_SET_ATTRIBUTE(desc, CUDNN_ATTR_CONVOLUTION_COMP_TYPE, CUDNN_TYPE_DATA_TYPE, 1, &compute_type);
  OPSCHED_SET_ATTRIBUTE(desc, CUDNN_ATTR_CONVOLUTION_CONV_MODE, CUDNN_TYPE_CONVOLUTION_MODE, 1, &mode);
  OPSCHED_SET_ATTRIBUTE(desc, CUDNN_ATTR_CONVOLUTION_SPATIAL_DIMS, CUDNN_TYPE_INT64, 1, &spatial_dims);
  OPSCHED_SET_ATTRIBUTE(desc, CUDNN_ATTR_CONVOLUTION_DILATIONS, CUDNN_TYPE_INT64, spatial_dims, dilations);
  OPSCHED_SET_ATTRIBUTE(desc, CUDNN_ATTR_CONVOLUTION_FILTER_STRIDES, CUDNN_TYPE_INT64, spatial_dims, strides);
  OPSCHED_SET_ATTRIBUTE(desc, CUDNN_ATTR_CONVOLUTION_PRE_PADDINGS, CUDNN_TYPE_INT64, spatial_dims, paddings);
  OPSCHED_SET_ATTRIBUTE(desc, CUDNN_ATTR_CONVOLUTION_POST_PADDINGS, CUDNN_TYPE_INT64, spatial_dims, paddings);
  OPSCHED_RETURN_IF_ERROR(Finalize(desc, "convolution"));
  return desc;
}

// out = 1 * op(in) + 0 * out: beta = 0 overwrites the output without reading it (the
// tuner poisons outputs with NaN). Scalars are float, as for an f32 compute type.
StatusOr<BackendDescriptor> BuildOperation(const OperationSpec& spec, const std::array<BackendDescriptor, 3>& tensors,
                                           const BackendDescriptor& conv) {
  OPSCHED_ASSIGN_OR_RETURN(BackendDescriptor desc, BackendDescriptor::Create(spec.type));
  for (size_t i = 0; i < tensors.size(); ++i) {
    OPSCHED_RETURN_IF_ERROR(SetAttribute(desc, spec.tensors[i].attribute,
                                         fmt::format("operation tensor {}", spec.tensors[i].name),
                                         CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, tensors[i].array()));
  }
  const float alpha = 1.0f;
  const float beta = 0.0f;
  OPSCHED_RETURN_IF_ERROR(
      SetAttribute(desc, spec.conv, "operation convolution", CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, conv.array()));
  OPSCHED_RETURN_IF_ERROR(SetAttribute(desc, spec.alpha, "operation alpha", CUDNN_TYPE_FLOAT, 1, &alpha));
  OPSCHED_RETURN_IF_ERROR(SetAttribute(desc, spec.beta, "operation beta", CUDNN_TYPE_FLOAT, 1, &beta));
  OPSCHED_RETURN_IF_ERROR(Finalize(desc, "operation"));
  return desc;
}

// Every descriptor of one operation's graph. cuDNN's own frontend keeps this chain alive
// as long as the plans made from it, and so does the plan cache.
struct OperationGraph {
  std::array<BackendDescriptor, 3> tensors;
  BackendDescriptor conv;
  BackendDescriptor operation;
  BackendDescriptor graph;
  std::array<int64_t, 3> uids = {};
};

StatusOr<OperationGraph> BuildOperationGraph(cudnnHandle_t handle, const Problem& p, GraphOp op, int64_t alignment) {
  const OperationSpec spec = SpecOf(p, op);
  const cudnnDataType_t type = CudnnDataType(p.type);
  OperationGraph g;
  for (size_t i = 0; i < g.tensors.size(); ++i) {
    OPSCHED_ASSIGN_OR_RETURN(g.tensors[i], AnnotateOr(BuildTensor(spec.tensors[i], type, alignment),
                                                      spec.tensors[i].name));
  }
  OPSCHED_ASSIGN_OR_RETURN(g.conv, BuildConvolution(p));
  OPSCHED_ASSIGN_OR_RETURN(g.operation, BuildOperation(spec, g.tensors, g.conv));
  OPSCHED_ASSIGN_OR_RETURN(g.graph, BackendDescriptor::Create(CUDNN_BACKEND_OPERATIONGRAPH_DESCRIPTOR));
  OPSCHED_SET_ATTRIBUTE(g.graph, CUDNN_ATTR_OPERATIONGRAPH_HANDLE, CUDNN_TYPE_HANDLE, 1, &handle);
  OPSCHED_SET_ATTRIBUTE(g.graph, CUDNN_ATTR_OPERATIONGRAPH_OPS, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1,
                        g.operation.array());
  OPSCHED_RETURN_IF_ERROR(Finalize(g.graph, "operation graph"));
  g.uids = OperationUids(spec);
  return g;
}

// ---------------------------------------------------------------------------------------
// Engines and plans.

// Why opsched does not offer an engine, from its notes; empty when it does. Tensor
// cores are fine for f16 and bf16 (their products are exact in f32) and for math=tf32;
// down-converting inputs would go below TF32 (to f16, which f32-range data may
// overflow: the legacy extern's reason for not allowing conversion either), and a
// reduced-precision reduction breaks "accumulation is f32".
std::string_view Exclusion(const Problem& p, uint32_t numerical, uint32_t behavior) {
  if ((behavior & Bit(CUDNN_BEHAVIOR_NOTE_RUNTIME_COMPILATION)) != 0) return "compiles kernels at run time";
  if ((numerical & Bit(CUDNN_NUMERICAL_NOTE_NONDETERMINISTIC)) != 0) return "is non-deterministic";
  if ((numerical & Bit(CUDNN_NUMERICAL_NOTE_DOWN_CONVERT_INPUTS)) != 0) return "down-converts its inputs";
  if ((numerical & Bit(CUDNN_NUMERICAL_NOTE_REDUCED_PRECISION_REDUCTION)) != 0) {
    return "reduces in reduced precision";
  }
  const bool strict_f32 = p.type == ElementType::kF32 && p.math == Math::kFp32;
  if (strict_f32 && (numerical & Bit(CUDNN_NUMERICAL_NOTE_TENSOR_CORE)) != 0) {
    return "runs f32 on tensor cores (TF32), and math=fp32";
  }
  // FFT and Winograd engines only where TransformsAllowed (conv2d_reference.h).
  const uint32_t transforms = Bit(CUDNN_NUMERICAL_NOTE_FFT) | Bit(CUDNN_NUMERICAL_NOTE_WINOGRAD) |
                              Bit(CUDNN_NUMERICAL_NOTE_WINOGRAD_TILE_4x4) | Bit(CUDNN_NUMERICAL_NOTE_WINOGRAD_TILE_6x6) |
                              Bit(CUDNN_NUMERICAL_NOTE_WINOGRAD_TILE_13x13);
  if (!TransformsAllowed(p) && (numerical & transforms) != 0) {
    return "transforms a filter above 3x3 (FFT or Winograd), and math=fp32";
  }
  return {};
}

// An engine with its default knobs, finalized into a plan on one handle.
struct EnginePlan {
  BackendDescriptor engine;
  BackendDescriptor config;
  BackendDescriptor plan;
  size_t workspace_bytes = 0;
};

// Unimplemented or InvalidArgument when cuDNN cannot run the engine on this graph or
// opsched does not offer it (Exclusion).
StatusOr<EnginePlan> BuildEnginePlan(cudnnHandle_t handle, const OperationGraph& g, const Problem& p, int64_t index) {
  EnginePlan e;
  OPSCHED_ASSIGN_OR_RETURN(e.engine, BackendDescriptor::Create(CUDNN_BACKEND_ENGINE_DESCRIPTOR));
  OPSCHED_SET_ATTRIBUTE(e.engine, CUDNN_ATTR_ENGINE_OPERATION_GRAPH, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, g.graph.array());
  OPSCHED_SET_ATTRIBUTE(e.engine, CUDNN_ATTR_ENGINE_GLOBAL_INDEX, CUDNN_TYPE_INT64, 1, &index);
  OPSCHED_RETURN_IF_ERROR(Finalize(e.engine, "engine"));

  OPSCHED_ASSIGN_OR_RETURN(const uint32_t numerical,
                           NoteBits<cudnnBackendNumericalNote_t>(e.engine, CUDNN_ATTR_ENGINE_NUMERICAL_NOTE,
                                                                 "CUDNN_ATTR_ENGINE_NUMERICAL_NOTE",
                                                                 CUDNN_TYPE_NUMERICAL_NOTE,
                                                                 CUDNN_NUMERICAL_NOTE_TYPE_COUNT));
  OPSCHED_ASSIGN_OR_RETURN(const uint32_t behavior,
                           NoteBits<cudnnBackendBehaviorNote_t>(e.engine, CUDNN_ATTR_ENGINE_BEHAVIOR_NOTE,
                                                                "CUDNN_ATTR_ENGINE_BEHAVIOR_NOTE",
                                                                CUDNN_TYPE_BEHAVIOR_NOTE,
                                                                CUDNN_BEHAVIOR_NOTE_TYPE_COUNT));
  if (const std::string_view reason = Exclusion(p, numerical, behavior); !reason.empty()) {
    return absl::UnimplementedError(fmt::format("the engine {}", reason));
  }

  OPSCHED_ASSIGN_OR_RETURN(e.config, BackendDescriptor::Create(CUDNN_BACKEND_ENGINECFG_DESCRIPTOR));
  OPSCHED_SET_ATTRIBUTE(e.config, CUDNN_ATTR_ENGINECFG_ENGINE, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, e.engine.array());
  OPSCHED_RETURN_IF_ERROR(Finalize(e.config, "engine config"));

  OPSCHED_ASSIGN_OR_RETURN(e.plan, BackendDescriptor::Create(CUDNN_BACKEND_EXECUTION_PLAN_DESCRIPTOR));
  OPSCHED_SET_ATTRIBUTE(e.plan, CUDNN_ATTR_EXECUTION_PLAN_HANDLE, CUDNN_TYPE_HANDLE, 1, &handle);
  OPSCHED_SET_ATTRIBUTE(e.plan, CUDNN_ATTR_EXECUTION_PLAN_ENGINE_CONFIG, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1,
                        e.config.array());
  OPSCHED_RETURN_IF_ERROR(Finalize(e.plan, "execution plan"));
  OPSCHED_ASSIGN_OR_RETURN(const int64_t workspace, GetInt64(e.plan, CUDNN_ATTR_EXECUTION_PLAN_WORKSPACE_SIZE,
                                                             "CUDNN_ATTR_EXECUTION_PLAN_WORKSPACE_SIZE"));
  if (workspace < 0) return absl::InternalError(fmt::format("cuDNN reports a workspace of {} bytes", workspace));
  e.workspace_bytes = static_cast<size_t>(workspace);
  return e;
}

// A failure that means "cuDNN cannot do this here" (NOT_SUPPORTED or BAD_PARAM in any of
// their refinements, or an engine opsched does not offer), as opposed to a real error.
bool IsRefusal(const Status& s) {
  return s.code() == StatusCode::kUnimplemented || s.code() == StatusCode::kInvalidArgument;
}

// A failure that may not happen again (memory ran out): the query fails rather than
// record a partial answer. Any other failure to build one engine's plan leaves that
// engine out of the query; at run time only refusals are remembered (plan cache), other
// errors are returned as they are.
bool IsTransient(const Status& s) { return s.code() == StatusCode::kResourceExhausted; }

// The usable engines of one operation, each with its workspace. A graph cuDNN refuses
// has none; an engine whose plan does not build is left out, unless memory ran out
// (then the query fails rather than record a partial answer).
StatusOr<std::vector<GraphEngine>> AskEngines(cudnnHandle_t handle, const Problem& p, GraphOp op) {
  std::vector<GraphEngine> usable;
  StatusOr<OperationGraph> graph = BuildOperationGraph(handle, p, op, ElementBytes(p.type));
  if (!graph.ok()) {
    if (IsRefusal(graph.status())) return usable;
    return Annotate(graph.status(), GraphOpName(op));
  }
  OPSCHED_ASSIGN_OR_RETURN(const int64_t count, GetInt64(graph->graph, CUDNN_ATTR_OPERATIONGRAPH_ENGINE_GLOBAL_COUNT,
                                                         "CUDNN_ATTR_OPERATIONGRAPH_ENGINE_GLOBAL_COUNT"));
  for (int64_t index = 0; index < count; ++index) {
    StatusOr<EnginePlan> plan = BuildEnginePlan(handle, *graph, p, index);
    if (plan.ok()) {
      usable.push_back({index, plan->workspace_bytes});
    } else if (IsTransient(plan.status())) {
      return Annotate(plan.status(), fmt::format("{} engine {}", GraphOpName(op), index));
    }
  }
  return usable;
}

StatusOr<GraphEngineQuery> AskCudnnGraph(const Problem& p) {
  OPSCHED_ASSIGN_OR_RETURN(cudnnHandle_t handle, cudnn::Handle(nullptr));
  GraphEngineQuery q;
  if (p.kind == Kind::kBackward) {
    OPSCHED_ASSIGN_OR_RETURN(q.backward_data, AskEngines(handle, p, GraphOp::kBackwardData));
    OPSCHED_ASSIGN_OR_RETURN(q.backward_filter, AskEngines(handle, p, GraphOp::kBackwardFilter));
  } else {
    OPSCHED_ASSIGN_OR_RETURN(q.forward, AskEngines(handle, p, GraphOp::kForward));
  }
  return q;
}

StatusOr<const GraphEngineQuery*> QueryByHash(const Workload& canonical, uint64_t hash) {
  // Keyed by (device, workload hash): engines differ between GPUs.
  static auto* cache = new DeviceQueryCache<GraphEngineQuery>();
  return cache->Get(hash, "cuDNN graph engine query", [&] { return AskCudnnGraph(MakeProblem(canonical)); });
}

// ---------------------------------------------------------------------------------------
// The plan cache.

// A finalized plan with the graph it was made from, and the variant pack of the last
// call: rebuilt only when the pointers change, so a loop over the same buffers creates
// nothing per call.
class CachedPlan {
 public:
  CachedPlan(OperationGraph graph, EnginePlan plan) : graph_(std::move(graph)), plan_(std::move(plan)) {}

  size_t workspace_bytes() const { return plan_.workspace_bytes; }

  Status Execute(cudnnHandle_t handle, const std::array<void*, 3>& pointers, void* workspace) {
    if (pack_.get() == nullptr || pointers != pack_pointers_ || workspace != pack_workspace_) {
      OPSCHED_ASSIGN_OR_RETURN(BackendDescriptor pack, BuildVariantPack(pointers, workspace));
      pack_ = std::move(pack);
      pack_pointers_ = pointers;
      pack_workspace_ = workspace;
    }
    OPSCHED_CUDNN_RETURN_IF_ERROR(cudnnBackendExecute(handle, plan_.plan.get(), pack_.get()));
    return absl::OkStatus();
  }

 private:
  StatusOr<BackendDescriptor> BuildVariantPack(const std::array<void*, 3>& pointers, void* workspace) const {
    OPSCHED_ASSIGN_OR_RETURN(BackendDescriptor pack, BackendDescriptor::Create(CUDNN_BACKEND_VARIANT_PACK_DESCRIPTOR));
    OPSCHED_SET_ATTRIBUTE(pack, CUDNN_ATTR_VARIANT_PACK_UNIQUE_IDS, CUDNN_TYPE_INT64, 3, graph_.uids.data());
    OPSCHED_SET_ATTRIBUTE(pack, CUDNN_ATTR_VARIANT_PACK_DATA_POINTERS, CUDNN_TYPE_VOID_PTR, 3, pointers.data());
    OPSCHED_SET_ATTRIBUTE(pack, CUDNN_ATTR_VARIANT_PACK_WORKSPACE, CUDNN_TYPE_VOID_PTR, 1, &workspace);
    OPSCHED_RETURN_IF_ERROR(Finalize(pack, "variant pack"));
    return pack;
  }

  // Destroyed in reverse order: the variant pack, the plan, then its graph.
  OperationGraph graph_;
  EnginePlan plan_;
  BackendDescriptor pack_;
  std::array<void*, 3> pack_pointers_ = {};
  void* pack_workspace_ = nullptr;
};

// A cache entry: the plan, or (plan null) why it did not build. That answer is cached
// because cuDNN would give it again; transient failures are not.
struct PlanSlot {
  std::unique_ptr<CachedPlan> plan;
  Status refusal;
};

// (handle, operation, workload hash, engine, claimed alignment). The handle stands for
// the thread, device and slot: plans are bound to the handle they were built on.
using PlanKey = std::tuple<cudnnHandle_t, int32_t, uint64_t, int64_t, int64_t>;
using PlanCache = absl::flat_hash_map<PlanKey, PlanSlot>;

PlanCache& ThreadPlanCache() {
  // Never destroyed, like the handles the plans belong to: destroying plans at thread or
  // process exit could outlive the driver.
  thread_local PlanCache* cache = new PlanCache();
  return *cache;
}

StatusOr<std::unique_ptr<CachedPlan>> BuildPlan(cudnnHandle_t handle, GraphOp op, const Problem& p, int64_t engine,
                                                int64_t alignment) {
  OPSCHED_ASSIGN_OR_RETURN(OperationGraph graph, BuildOperationGraph(handle, p, op, alignment));
  OPSCHED_ASSIGN_OR_RETURN(EnginePlan plan, BuildEnginePlan(handle, graph, p, engine));
  return std::make_unique<CachedPlan>(std::move(graph), std::move(plan));
}

StatusOr<PlanSlot*> FindOrBuildPlan(cudnnHandle_t handle, GraphOp op, const Problem& p, uint64_t hash, int64_t engine,
                                    int64_t alignment) {
  PlanCache& cache = ThreadPlanCache();
  const PlanKey key{handle, static_cast<int32_t>(op), hash, engine, alignment};
  if (auto it = cache.find(key); it != cache.end()) return &it->second;
  PlanSlot slot;
  StatusOr<std::unique_ptr<CachedPlan>> built = BuildPlan(handle, op, p, engine, alignment);
  if (built.ok()) {
    slot.plan = std::move(built).value();
  } else if (IsRefusal(built.status())) {
    slot.refusal = built.status();  // cuDNN would refuse again: remembered
  } else {
    return built.status();  // memory or a real error: reported as it is, not cached
  }
  return &cache.try_emplace(key, std::move(slot)).first->second;
}

// The alignment a plan may claim for a call: 16 bytes when every pointer has it, else
// the element size, which every pointer of the op's tensors has.
int64_t CallAlignment(const std::array<void*, 3>& pointers, int64_t element_bytes) {
  for (void* ptr : pointers) {
    if (reinterpret_cast<uintptr_t>(ptr) % kPreferredAlignment != 0) return element_bytes;
  }
  return kPreferredAlignment;
}

}  // namespace

// ---------------------------------------------------------------------------------------
// The header's functions.

std::string_view GraphOpName(GraphOp op) {
  switch (op) {
    case GraphOp::kBackwardData:
      return "backward data";
    case GraphOp::kBackwardFilter:
      return "backward filter";
    default:
      return "forward";
  }
}

const std::vector<GraphEngine>& GraphEngineQuery::engines(GraphOp op) const {
  switch (op) {
    case GraphOp::kBackwardData:
      return backward_data;
    case GraphOp::kBackwardFilter:
      return backward_filter;
    default:
      return forward;
  }
}

std::optional<size_t> GraphEngineQuery::Workspace(GraphOp op, int64_t engine) const {
  for (const GraphEngine& e : engines(op)) {
    if (e.index == engine) return e.workspace_bytes;
  }
  return std::nullopt;
}

StatusOr<const GraphEngineQuery*> QueryGraphEngines(const Workload& canonical, uint64_t hash) {
  return QueryByHash(canonical, hash);
}

StatusOr<const GraphEngineQuery*> QueryGraphEngines(const Workload& canonical) {
  return QueryByHash(canonical, canonical.hash());
}

Status ExecuteGraphOp(cudnnHandle_t handle, GraphOp op, const Problem& p, uint64_t workload_hash, int64_t engine,
                      void* workspace, size_t workspace_bytes, std::string_view who) {
  const std::array<void*, 3> pointers = OperationPointers(p, op);
  const int64_t element_bytes = ElementBytes(p.type);
  const std::string_view op_name = GraphOpName(op);
  CachedPlan* plan = nullptr;
  if (CallAlignment(pointers, element_bytes) > element_bytes) {
    StatusOr<PlanSlot*> aligned = FindOrBuildPlan(handle, op, p, workload_hash, engine, kPreferredAlignment);
    if (!aligned.ok()) return Annotate(aligned.status(), fmt::format("{}: {} engine {}", who, op_name, engine));
    // A refusal, or more workspace than given, falls back to the plan the query measured.
    if ((*aligned)->plan != nullptr && (*aligned)->plan->workspace_bytes() <= workspace_bytes) {
      plan = (*aligned)->plan.get();
    }
  }
  if (plan == nullptr) {
    StatusOr<PlanSlot*> conservative = FindOrBuildPlan(handle, op, p, workload_hash, engine, element_bytes);
    if (!conservative.ok()) {
      return Annotate(conservative.status(), fmt::format("{}: {} engine {}", who, op_name, engine));
    }
    if ((*conservative)->plan == nullptr) {
      return absl::UnimplementedError(fmt::format("{}: {} engine {} has no plan for this shape: {}", who, op_name,
                                                  engine, Message((*conservative)->refusal)));
    }
    plan = (*conservative)->plan.get();
    if (plan->workspace_bytes() > workspace_bytes) {
      return absl::InternalError(fmt::format("{}: {} engine {} needs {} bytes of workspace, {} given", who, op_name,
                                             engine, plan->workspace_bytes(), workspace_bytes));
    }
  }
  // Formatted only on failure: the warm path allocates nothing.
  if (Status executed = plan->Execute(handle, pointers, workspace); !executed.ok()) {
    return Annotate(executed, fmt::format("{}: {} engine {}", who, op_name, engine));
  }
  return absl::OkStatus();
}

}  // namespace opsched::conv2d
