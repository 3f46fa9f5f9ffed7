// Implementation: one registered way to compute an op (CUTLASS's Operation, MIOpen's
// solver): an honest applicability check, a config space, a workspace size and Run.
// Implementations live beside their op in ops/<op>/ (vendor ones in extern/) and
// register themselves with OPSCHED_REGISTER_IMPLEMENTATION; names are stable because
// records persist them.
#pragma once

#include <cstddef>
#include <string_view>

#include "absl/types/span.h"
#include "core/config.h"
#include "core/device.h"
#include "core/error_slot.h"
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
  virtual ConfigSpace Space(const Workload& workload, const Target& target) const = 0;
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
  // Queues the work on args.stream; never synchronises the host with the device.
  virtual Status Run(const RunArgs& args) const = 0;
};

}  // namespace opsched
