// Runtime: what a library consumer links (//:opsched). Built from a target and zero or
// more record files, it runs ops with the implementation and config the dispatcher
// chooses — tuned where records exist, else learned from the nearest tuned shape, else
// the op's strategy rules — on the caller's stream, with no host synchronisation and no
// compilation at run time. Thread-safe for concurrent callers.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/types/span.h"
#include "core/status.h"
#include "core/stream.h"
#include "core/target.h"
#include "core/tensor.h"
#include "core/workload.h"
#include "opsched/workspace.h"
#include "strategies/decision.h"
#include "strategies/dispatch_options.h"

namespace opsched {

namespace records {
class Database;
}
class Registry;
class Selector;

// How data errors found on the device (an out-of-range scatter index) reach the caller,
// on a GPU and on the CPU alike.
enum class DeviceErrors {
  // The call returns at once (OK); the error is returned by Synchronize() (or the next
  // TakeDeviceError()). No host synchronisation inside a call.
  kDeferred,
  // The call waits for the op's check and returns the error itself (debugging, tests).
  kSynchronous,
};

struct RuntimeOptions {
  // Where ops run; the default is DefaultTarget() (the first GPU, else the CPU).
  std::optional<Target> target;
  // Record logs to load (opsched tune writes them).
  std::vector<std::string> record_files;
  // A selector model (opsched records train writes one) for workloads with no record.
  // A model that cannot be used here (corrupt, another version, another arch, or another
  // device without allow_transferred_records) is left out with an error in
  // model_status(); the Runtime then decides by records, rules and the vendor's heuristic.
  std::string model_file;
  // Deterministic choices only, transferred records, nearest-workload records.
  DispatchOptions dispatch;
  // Workspace memory; not owned. Null: a caching allocator owned by the runtime.
  WorkspaceAllocator* allocator = nullptr;
  // Null: Registry::Global(), which Create fills with every built-in op first
  // (RegisterAll()).
  const Registry* registry = nullptr;
  DeviceErrors device_errors = DeviceErrors::kDeferred;
  // A file (created when missing) that collects every workload served without an exact
  // record for this target, once each, as a suite for `opsched tune --suite FILE`
  // (OPSCHED_RECORD_UNTUNED in Python). Empty: none. See opsched/untuned_recorder.h.
  std::string record_untuned_file;
};

enum class ScatterReduction { kNone, kAdd, kMul, kMin, kMax };
enum class ReduceKind { kSum, kMean, kMax, kMin, kSumSquares };
enum class ConvLayout { kNchw, kNhwc };
// kFp32: no TF32 (single-precision inputs to every product, f32 accumulation); kTf32:
// products may round their inputs to TF32. It changes results, so it is part of the
// workload, never a silent knob.
enum class ConvMath { kFp32, kTf32 };
enum class Activation { kIdentity, kRelu, kSigmoid, kTanh };

// The attributes of a 2-D convolution, as (height, width) pairs.
struct Conv2dParams {
  int64_t stride[2] = {1, 1};
  int64_t pad[2] = {0, 0};
  int64_t dilation[2] = {1, 1};
  int64_t groups = 1;
  ConvLayout layout = ConvLayout::kNchw;
  ConvMath math = ConvMath::kFp32;
};

// A tensor named as a pointwise program refers to it.
struct NamedTensor {
  std::string_view name;
  Tensor tensor;
};

class Runtime {
 public:
  static StatusOr<std::unique_ptr<Runtime>> Create(RuntimeOptions options = {});

  ~Runtime();
  Runtime(const Runtime&) = delete;
  Runtime& operator=(const Runtime&) = delete;

  const Target& target() const;
  const records::Database& records() const;
  // Why the model of RuntimeOptions::model_file is not used (OK when it is, or none was
  // given).
  const Status& model_status() const;
  // "N records loaded, none for this target (...)" when the record files hold records but
  // none this runtime can use (another device, or other cuBLAS/cuDNN versions: records'
  // NoRecordsForTargetNote); empty otherwise. Front ends report it: the CLI with its own
  // prefix, the C API (and so Python) as a logged warning.
  const std::string& records_note() const;
  const Selector* selector() const;

  // Runs `workload` on `tensors` (its inputs then outputs, in the op's order) on
  // `stream`. The tensors must match the workload's descriptors and live on the target.
  //
  // The first call of a workload decides and prepares it (Implementation::Prepare); later
  // calls only look it up and run the Prepared object: no parsing, no vendor descriptor,
  // no allocation once the workspace has grown, no host synchronisation. So once a
  // workload has been called, its calls may be captured into a CUDA graph (a first call
  // under capture is refused with an error saying so). The caller's current device is
  // restored after each call.
  Status Run(const Workload& workload, absl::Span<const Tensor> tensors, const Stream& stream);
  // The same with the caller's workspace (CUB style): at least WorkspaceBytes(workload)
  // bytes on the target, used only by the work this call queues on `stream`.
  Status Run(const Workload& workload, absl::Span<const Tensor> tensors, const Stream& stream, void* workspace,
             size_t workspace_bytes);
  // The workspace a call of `workload` needs (deciding and preparing it when new).
  StatusOr<size_t> WorkspaceBytes(const Workload& workload);
  // Waits for `stream`, then returns the first data error a device found in calls made
  // on that stream before (kDeferred), naming the op and position; OK when there was
  // none. Errors of other streams stay for their own Synchronize.
  Status Synchronize(const Stream& stream);
  // The first deferred device error already known on any stream, without waiting (OK if
  // none).
  Status TakeDeviceError();

  // The decision for a workload (cached).
  StatusOr<Decision> Decide(const Workload& workload);
  // The decision and every candidate considered.
  StatusOr<Explanation> Explain(const Workload& workload) const;
  StatusOr<Explanation> Explain(std::string_view workload_line) const;

  // ScatterElements / torch.scatter: out = data, then out[...indices[p]...] (reduction)=
  // updates[p]. `out` may be `data` itself (in place). Negative axis counts from the end.
  Status Scatter(const Tensor& data, const Tensor& indices, const Tensor& updates,
                 const Tensor& out, int64_t axis, ScatterReduction reduction,
                 const Stream& stream);

  // y = op of x over `axes` (negative axes count from the end; empty: every axis),
  // accumulated in f32. y's shape drops the reduced axes, or keeps them as 1 with
  // `keepdims`; its dtype is x's or f32.
  Status Reduce(const Tensor& x, const Tensor& y, absl::Span<const int64_t> axes, ReduceKind op,
                bool keepdims, const Stream& stream);
  // The per-channel bias gradient: db[c] = sum of dy over every axis but the channel
  // axis (1 for layout "nchw", the last for "nhwc").
  Status BiasGrad(const Tensor& dy, const Tensor& db, std::string_view layout, const Stream& stream);

  // y = conv2d(x, w). Layout nchw: x [N,C,H,W], w [K,C/groups,R,S], y [N,K,P,Q];
  // nhwc: x [N,H,W,C], w [K,R,S,C/groups], y [N,P,Q,K]. y must be contiguous.
  Status Conv2d(const Tensor& x, const Tensor& w, const Tensor& y, const Conv2dParams& params,
                const Stream& stream);
  // y = act(conv2d(x, w) + b[k]), fused where an implementation can.
  Status Conv2dBiasActivation(const Tensor& x, const Tensor& w, const Tensor& b, const Tensor& y,
                              const Conv2dParams& params, Activation act, const Stream& stream);
  // dx and dw of y = conv2d(x, w) given dy; with `db` (not null) also the bias gradient
  // (the reduce family's BiasGrad). Whether dx and dw run on one stream or two is the
  // dispatcher's choice (tuned under a memory budget); either way the work is joined
  // back onto `stream`.
  Status Conv2dBackward(const Tensor& x, const Tensor& w, const Tensor& dy, const Tensor& dx,
                        const Tensor& dw, const Tensor* db, const Conv2dParams& params,
                        const Stream& stream);

  // outputs = program(inputs), elementwise with broadcasting (docs/ops/pointwise.md):
  //   Pointwise("relu(a+b)*0.5", {{"a", a}, {"b", b}}, {{"out", out}}, stream)
  //   Pointwise("c2=sigmoid(f)*c+sigmoid(i)*tanh(g); h=sigmoid(o)*tanh(c2)", {i,f,g,o,c}, {c2,h}, s)
  // Outputs are contiguous and share one shape; inputs broadcast to it. An output may
  // be the input that comes first by name, in place. The program is parsed and
  // compiled once per (text, descriptors) and cached with the decision.
  Status Pointwise(std::string_view program, absl::Span<const NamedTensor> inputs,
                   absl::Span<const NamedTensor> outputs, const Stream& stream);

 private:
  // Everything else (records, selector, dispatcher, error-slot bookkeeping, allocator),
  // defined in runtime.cc: this header pulls in no records, protobuf or dispatcher types.
  struct State;
  explicit Runtime(std::unique_ptr<State> state);
  Status RunWith(const Workload& workload, absl::Span<const Tensor> tensors, const Stream& stream,
                 void* workspace, size_t workspace_bytes, bool caller_workspace);

  std::unique_ptr<State> s_;
};

}  // namespace opsched
