// Implementation: one registered way to compute an op (CUTLASS's Operation, MIOpen's
// solver): an honest applicability check, a config space, a workspace size, Prepare and
// Run. Prepare does once, per (workload, config, target), what does not depend on the
// tensors' addresses (parsing, vendor descriptors and plans, the workspace size); the
// Prepared object it returns runs the op with nothing but the tensors, a workspace and a
// stream. The Runtime keeps one per cached decision; the tuner one per measured config.
// Implementations live beside their op in ops/<op>/ (vendor ones in extern/); the op's
// Register (ops/<op>/<op>_register.h) adds them to a Registry. Names are stable because
// records persist them.
#pragma once

#include <cstddef>
#include <memory>
#include <optional>
#include <string_view>
#include <utility>

#include "absl/types/span.h"
#include "core/config.h"
#include "core/device.h"
#include "core/error_slot.h"
#include "core/launch_shape.h"
#include "core/space.h"
#include "core/status.h"
#include "core/stream.h"
#include "core/target.h"
#include "core/tensor.h"
#include "core/workload.h"

namespace opsched {

struct ImplementationTraits {
  bool deterministic = true;    // same inputs give bit-identical outputs
  bool vendor_library = false;  // calls cuDNN / cuBLAS / CUB
  bool in_place = false;        // accepts an output aliasing its first input
  // Calls a vendor library loaded at run time, whose version decides its speed: records
  // measured with other versions of it do not hold (records::Database::SetLibraryUse).
  // cuDNN may call cuBLAS(Lt) itself, so its users say both.
  bool uses_cublas = false;
  bool uses_cudnn = false;
};

// What Run receives. `tensors` holds the op's inputs then outputs in OpDef order.
struct RunArgs {
  const Workload& workload;
  absl::Span<const Tensor> tensors;
  const Config& config;
  void* workspace = nullptr;
  size_t workspace_bytes = 0;
  const Stream& stream;
  // For implementations that ReportDeviceErrors(): where the op's last kernel reports
  // data errors (see core/error_slot.h). Empty otherwise.
  ErrorSlot error_slot = {};
};

// What a Prepared object's Run receives: the tensors of the workload it was prepared
// for (inputs then outputs, OpDef order), a workspace of at least workspace_bytes(), the
// stream, and the error slot for implementations that ReportDeviceErrors().
struct PreparedArgs {
  absl::Span<const Tensor> tensors;
  void* workspace = nullptr;
  size_t workspace_bytes = 0;
  const Stream& stream;
  ErrorSlot error_slot = {};
};

// A one-off Run's arguments as a Prepared object's (implementations whose Run is Prepare
// then Run).
inline PreparedArgs AsPreparedArgs(const RunArgs& a) {
  return PreparedArgs{a.tensors, a.workspace, a.workspace_bytes, a.stream, a.error_slot};
}

// One implementation made ready for one canonical workload and config on one target.
// Every built-in implementation overrides Prepare and does its parsing, knob reading
// and descriptor creation there, so Run only binds the tensors and launches (or, on the
// CPU, computes), never synchronises the host, and is safe under CUDA stream capture
// once it has run once on the calling thread (cuDNN graph plans and library handles are
// made per thread on first use). Its Run(RunArgs) is PrepareAndRun. The default Prepare
// (test implementations) keeps copies of the workload and config and calls Run.
// Immutable once made, so concurrent callers may share it.
class Prepared {
 public:
  explicit Prepared(size_t workspace_bytes) : workspace_bytes_(workspace_bytes) {}
  virtual ~Prepared() = default;
  Prepared(const Prepared&) = delete;
  Prepared& operator=(const Prepared&) = delete;

  // Device memory Run needs besides its tensors.
  size_t workspace_bytes() const { return workspace_bytes_; }
  virtual Status Run(const PreparedArgs& args) const = 0;

 private:
  size_t workspace_bytes_;
};

// A Prepared object over a callable `Status(const PreparedArgs&)` that holds what
// Prepare computed (parsed parameters, engine ids): the short way to write Prepare.
template <typename Call>
class PreparedCall final : public Prepared {
 public:
  PreparedCall(size_t workspace_bytes, Call call) : Prepared(workspace_bytes), call_(std::move(call)) {}
  Status Run(const PreparedArgs& a) const override { return call_(a); }

 private:
  const Call call_;
};

template <typename Call>
std::unique_ptr<Prepared> MakePrepared(size_t workspace_bytes, Call call) {
  return std::make_unique<PreparedCall<Call>>(workspace_bytes, std::move(call));
}

class Implementation;
// Run for implementations that override Prepare: prepares for the args' workload and
// config (the target given is the stream's device alone) and runs once.
Status PrepareAndRun(const Implementation& impl, const RunArgs& args);

class Implementation {
 public:
  virtual ~Implementation() = default;

  virtual std::string_view op() const = 0;
  // Stable name, e.g. "scatter_cuda_parallel"; shown in logs, records and explain.
  virtual std::string_view name() const = 0;
  virtual DeviceKind device_kind() const = 0;
  virtual ImplementationTraits traits() const = 0;

  // OK when this implementation computes `workload` correctly on `target`; otherwise
  // an error whose message says why not ("needs a rank-1 tensor"). A promise of
  // correctness, cheap to call.
  virtual Status Applicable(const Workload& workload, const Target& target) const = 0;
  // Legal configs for `workload` on `target` (one empty config when it has no knobs).
  // Built-in implementations declare their knobs once as a Knobs<T> (registry/knobs.h)
  // and derive the space, the parsing in Prepare and the default from it.
  virtual ConfigSpace Space(const Workload& workload, const Target& target) const = 0;
  // The config a strategy rule without one of its own takes, and the dispatcher's last
  // resort: the knobs' declared defaults (the space's preferred values), or the legal
  // config closest to them where the workload rules them out; never merely the first
  // config enumerated. NotFound when the space is empty.
  StatusOr<Config> DefaultConfig(const Workload& workload, const Target& target) const {
    return Space(workload, target).Default();
  }
  // Device memory Run needs besides its tensors.
  virtual size_t WorkspaceBytes(const Workload& workload, const Config& config) const {
    (void)workload;
    (void)config;
    return 0;
  }
  // True when Run detects data errors on the device (and writes args.error_slot, which
  // is then always given) instead of returning them.
  virtual bool ReportsDeviceErrors() const { return false; }
  // The vendor library's own choice of config for `workload` (cuDNN's heuristic, what a
  // framework runs when it does not benchmark): the floor the dispatcher falls back to
  // when it knows nothing better. Unimplemented for implementations without one.
  virtual StatusOr<Config> VendorChoice(const Workload& workload, const Target& target) const {
    (void)workload;
    (void)target;
    return absl::UnimplementedError("no vendor heuristic");
  }
  // The grid of the main kernel that `config` launches for `canonical` on `target`: a
  // feature of the selector's model (core/launch_shape.h). nullopt where the
  // implementation does not say (vendor libraries, CPU code) or the config does not parse.
  virtual std::optional<LaunchShape> MainLaunch(const Workload& canonical, const Config& config,
                                                const Target& target) const {
    (void)canonical;
    (void)config;
    (void)target;
    return std::nullopt;
  }
  // Queues the work on args.stream; never synchronises the host with the device.
  virtual Status Run(const RunArgs& args) const = 0;
  // This implementation ready for `canonical` and `config` on `target` (the target's
  // device current on the calling thread). The default keeps copies of the workload and
  // config and calls Run; implementations with per-call host work worth saving (vendor
  // descriptors, parsed parameters) override it. Errors as Run would return them.
  virtual StatusOr<std::unique_ptr<Prepared>> Prepare(const Workload& canonical, const Config& config,
                                                      const Target& target) const;
};

}  // namespace opsched
