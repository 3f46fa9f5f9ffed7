// Runtime: what a library consumer links (//:opsched). Built from a target and zero or
// more record files, it runs ops with the implementation and config the dispatcher
// chooses — tuned where records exist, else learned from the nearest tuned shape, else
// the op's strategy rules — on the caller's stream, with no host synchronisation and no
// compilation at run time. Thread-safe for concurrent callers.
#pragma once

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
#include "records/database.h"
#include "strategies/decision.h"
#include "strategies/dispatcher.h"
#include "strategies/registry.h"

namespace opsched {

struct RuntimeOptions {
  // Where ops run; the default is DefaultTarget() (the first GPU, else the CPU).
  std::optional<Target> target;
  // Record logs to load (opsched tune writes them).
  std::vector<std::string> record_files;
  // Deterministic choices only, transferred records, nearest-workload records.
  DispatchOptions dispatch;
  // Workspace memory; not owned. Null: a caching allocator owned by the runtime.
  WorkspaceAllocator* allocator = nullptr;
  // Null: Registry::Global().
  const Registry* registry = nullptr;
};

enum class ScatterReduction { kNone, kAdd, kMul, kMin, kMax };

class Runtime {
 public:
  static StatusOr<std::unique_ptr<Runtime>> Create(RuntimeOptions options = {});

  const Target& target() const { return dispatcher_->target(); }
  const records::Database& records() const { return *db_; }

  // Runs `workload` on `tensors` (its inputs then outputs, in the op's order) on
  // `stream`. The tensors must match the workload's descriptors and live on the target.
  Status Run(const Workload& workload, absl::Span<const Tensor> tensors, const Stream& stream);
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

 private:
  Runtime() = default;
  Status Validate(const CachedDecision& entry, absl::Span<const Tensor> tensors,
                  const Stream& stream) const;

  std::unique_ptr<records::Database> db_;
  std::unique_ptr<Dispatcher> dispatcher_;
  std::unique_ptr<CachingWorkspaceAllocator> owned_allocator_;
  WorkspaceAllocator* allocator_ = nullptr;
};

}  // namespace opsched
