// What the conv2d cuDNN graph-API externs (conv2d_cudnn_graph_impls.cc) build on: the engines
// cuDNN's graph (backend) API offers for one operation of a Problem, and the execution of
// one operation with a finalized plan cached per thread.
//
// Why a second cuDNN extern beside the legacy one (conv2d_cudnn*.cc): the legacy API
// rebuilds its internal plan on every call, ~40 µs of host time per forward call and
// 100+ µs per backward pair on an H100, which bounds small convolutions. The graph API
// finalizes an execution plan once; a warm call is one variant pack and one
// cudnnBackendExecute.
//
// An engine is named by its global index in the operation graph of the problem: the
// knob value records persist. Only engines opsched can promise the workload's semantics
// with are offered: none that compiles at run time, none cuDNN notes as
// non-deterministic, down-converting inputs or reducing in reduced precision, and for
// f32 data with math=fp32 none on tensor cores (they round f32 inputs to TF32).
#pragma once

#include <cudnn.h>

#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string_view>
#include <vector>

#include "core/status.h"
#include "core/workload.h"
#include "ops/conv2d/conv2d_params.h"

namespace opsched::conv2d {

// The three convolution operations of the graph API.
enum class GraphOp : int32_t { kForward = 0, kBackwardData = 1, kBackwardFilter = 2 };

std::string_view GraphOpName(GraphOp op);  // "forward", "backward data", "backward filter"

// One usable engine of an operation, with the workspace its plan needs.
struct GraphEngine {
  int64_t index = 0;  // global index in the operation graph
  size_t workspace_bytes = 0;
};

// The usable engines of one workload, in index order: forward for conv2d, backward data
// and filter for conv2d_backward (the others empty). Asked with tensors claimed aligned
// to their element size only, so every engine listed runs on any pointer the op accepts.
struct GraphEngineQuery {
  std::vector<GraphEngine> forward;
  std::vector<GraphEngine> backward_data;
  std::vector<GraphEngine> backward_filter;

  const std::vector<GraphEngine>& engines(GraphOp op) const;
  // The workspace of a usable engine; nullopt when the engine is not usable here.
  std::optional<size_t> Workspace(GraphOp op, int64_t engine) const;
};

// The query for a canonical conv2d or conv2d_backward workload on the calling thread's
// current device: asked of cuDNN on first use (it finalizes a plan per engine, so
// milliseconds), then served from a process-wide cache keyed by (device, workload hash).
// Failures are returned, not cached. The pointer stays valid for the life of the process.
StatusOr<const GraphEngineQuery*> QueryGraphEngines(const Workload& canonical);
// The same with the workload's hash() already at hand.
StatusOr<const GraphEngineQuery*> QueryGraphEngines(const Workload& canonical, uint64_t hash);

// Queues `op` of problem `p` (pointers set) with engine `engine` on `handle`'s stream.
// `workload_hash` is the canonical workload's hash(); `workspace` holds
// `workspace_bytes` for this operation alone. The plan comes from a thread-local cache
// keyed by (handle, op, workload hash, engine, pointer alignment) and is built on first
// use. When the pointers are 16-byte aligned a plan claiming that alignment is preferred
// (vectorised engines), unless it needs more workspace than given; otherwise the plan
// claims the element size, as the query did. Unimplemented when cuDNN has no usable plan
// for the engine (or the engine is one opsched does not offer); `who` prefixes errors.
Status ExecuteGraphOp(cudnnHandle_t handle, GraphOp op, const Problem& p, uint64_t workload_hash, int64_t engine,
                      void* workspace, size_t workspace_bytes, std::string_view who);

}  // namespace opsched::conv2d
