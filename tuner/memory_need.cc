#include "tuner/memory_need.h"

#include "core/format.h"

namespace opsched {
namespace {

std::string GiB(int64_t bytes) { return fmt::format("{:.1f} GiB", bytes / double(int64_t{1} << 30)); }

}  // namespace

MemoryNeed TrialMemoryNeed(const OpDef& op, const Workload& canonical) {
  // Valid descriptors are below TensorDesc::kMaxBytes each: these sums cannot overflow.
  MemoryNeed need;
  for (const TensorArg& t : canonical.tensors()) {
    need.device_bytes += t.desc.storage_bytes();
    need.host_bytes += t.desc.storage_bytes();
  }
  for (const TensorDesc& d : op.OutputDescs(canonical)) {
    need.device_bytes += d.storage_bytes();
    need.host_bytes += d.storage_bytes() + d.numel() * static_cast<int64_t>(sizeof(double));
  }
  return need;
}

Status CheckMemoryNeed(const OpDef& op, const Workload& canonical, const Target& target) {
  const MemoryNeed need = TrialMemoryNeed(op, canonical);
  const int64_t host = CpuTarget().memory_bytes;
  const bool cpu = target.kind == DeviceKind::kCpu;
  const int64_t host_need = cpu ? need.host_bytes + need.device_bytes : need.host_bytes;
  if (!cpu && target.memory_bytes > 0 && need.device_bytes > target.memory_bytes) {
    return absl::ResourceExhaustedError(fmt::format("its tensors need {} of device memory; {} has {}",
                                                    GiB(need.device_bytes), target.device_name,
                                                    GiB(target.memory_bytes)));
  }
  if (host > 0 && host_need > host) {
    return absl::ResourceExhaustedError(fmt::format(
        "running it needs {} of host memory (its tensors{} and their float64 reference); this "
        "host has {}",
        GiB(host_need), cpu ? ", a copy of each" : "", GiB(host)));
  }
  return absl::OkStatus();
}

}  // namespace opsched
