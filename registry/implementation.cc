#include "registry/implementation.h"

namespace opsched {
namespace {

// Prepare's default: the workload and config kept, Run called with them.
class RunPrepared final : public Prepared {
 public:
  RunPrepared(const Implementation& impl, const Workload& canonical, const Config& config, size_t workspace_bytes)
      : Prepared(workspace_bytes), impl_(impl), workload_(canonical), config_(config) {}

  Status Run(const PreparedArgs& a) const override {
    return impl_.Run(RunArgs{workload_, a.tensors, config_, a.workspace, a.workspace_bytes, a.stream, a.error_slot});
  }

 private:
  const Implementation& impl_;
  const Workload workload_;
  const Config config_;
};

}  // namespace

Status PrepareAndRun(const Implementation& impl, const RunArgs& a) {
  Target target;
  target.kind = a.stream.device().kind;
  target.device_index = a.stream.device().index;
  OPSCHED_ASSIGN_OR_RETURN(std::unique_ptr<Prepared> prepared, impl.Prepare(a.workload, a.config, target));
  return prepared->Run(AsPreparedArgs(a));
}

StatusOr<std::unique_ptr<Prepared>> Implementation::Prepare(const Workload& canonical, const Config& config,
                                                            const Target&) const {
  return std::make_unique<RunPrepared>(*this, canonical, config, WorkspaceBytes(canonical, config));
}

}  // namespace opsched
