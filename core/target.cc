#include "core/target.h"

#include <unistd.h>

#include <fstream>
#include <thread>

#include "core/format.h"

#include "core/gpu/gpu_backend.h"
#include "core/stable_hash.h"

namespace opsched {
namespace {

std::string CpuModelName() {
  std::ifstream in("/proc/cpuinfo");
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind("model name", 0) == 0) {
      size_t start = line.find(':');
      if (start == std::string::npos) continue;
      start = line.find_first_not_of(" \t", start + 1);
      size_t end = line.find_last_not_of(" \t\r");
      if (start != std::string::npos) return line.substr(start, end - start + 1);
    }
  }
  return "unknown cpu";
}

std::string CpuArch() {
#if defined(__x86_64__)
  std::string arch = "x86_64";
  __builtin_cpu_init();
  if (__builtin_cpu_supports("avx512f")) {
    arch += "-avx512";
  } else if (__builtin_cpu_supports("avx2")) {
    arch += "-avx2";
  }
  return arch;
#elif defined(__aarch64__)
  return "aarch64";
#else
  return "unknown";
#endif
}

}  // namespace

uint64_t Target::fingerprint() const {
  StableHasher h;
  h.String(DeviceKindName(kind))
      .String(device_name)
      .String(arch)
      .Int(sm_count)
      .Int(driver_version)
      .Int(runtime_version)
      .Int(cublas_version)
      .Int(cudnn_version);
  return h.value();
}

uint64_t Target::platform_fingerprint() const {
  StableHasher h;
  h.String("platform")
      .String(DeviceKindName(kind))
      .String(device_name)
      .String(arch)
      .Int(sm_count)
      .Int(driver_version)
      .Int(runtime_version);
  return h.value();
}

std::string Target::arch_key() const { return fmt::format("{}/{}", DeviceKindName(kind), arch); }

std::string Target::ToString() const {
  std::string out = fmt::format("{} {} {}, {} {}, {:.1f} GiB", device().ToString(), device_name,
                                arch, sm_count, kind == DeviceKind::kCpu ? "threads" : "SMs",
                                memory_bytes / double(1ll << 30));
  if (kind != DeviceKind::kCpu) {
    out += fmt::format(", L2 {:.0f} MiB, driver {}, runtime {}, cuBLAS {}, cuDNN {}",
                       l2_bytes / double(1 << 20), driver_version, runtime_version,
                       cublas_version, cudnn_version);
  }
  return out;
}

Target CpuTarget() {
  Target t;
  t.kind = DeviceKind::kCpu;
  t.device_name = CpuModelName();
  t.arch = CpuArch();
  t.sm_count = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  long pages = sysconf(_SC_PHYS_PAGES);
  long page_size = sysconf(_SC_PAGE_SIZE);
  t.memory_bytes = pages > 0 && page_size > 0 ? int64_t(pages) * page_size : 0;
  long l3 = sysconf(_SC_LEVEL3_CACHE_SIZE);
  long l2 = sysconf(_SC_LEVEL2_CACHE_SIZE);
  t.l2_bytes = l3 > 0 ? l3 : (l2 > 0 ? l2 : 0);
  return t;
}

StatusOr<Target> QueryTarget(const Device& device) {
  if (device.is_cpu()) return CpuTarget();
  return gpu::QueryDeviceTarget(device);
}

std::vector<Target> ListTargets() {
  std::vector<Target> targets = {CpuTarget()};
  int count = gpu::DeviceCount();
  for (int i = 0; i < count; ++i) {
    StatusOr<Target> t = gpu::QueryDeviceTarget(Device{gpu::BackendKind(), i});
    if (t.ok()) targets.push_back(*std::move(t));
  }
  return targets;
}

Target DefaultTarget() {
  std::vector<Target> targets = ListTargets();
  return targets.size() > 1 ? targets[1] : targets[0];
}

}  // namespace opsched
