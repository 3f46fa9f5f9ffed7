// Target: where an op runs, described well enough to decide whether a measurement taken
// elsewhere applies here.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "core/device.h"
#include "core/status.h"

namespace opsched {

struct Target {
  DeviceKind kind = DeviceKind::kCpu;
  int device_index = 0;
  std::string device_name;  // "NVIDIA H200", or the CPU model
  std::string arch;         // "sm_90", "gfx90a", "x86_64"
  int sm_count = 0;         // multiprocessors, or hardware threads on a CPU
  int64_t memory_bytes = 0;
  int64_t l2_bytes = 0;     // L2 (GPU) or last-level cache (CPU)
  int driver_version = 0;   // e.g. 13000 for CUDA 13.0; 0 on a CPU
  int runtime_version = 0;
  int cublas_version = 0;
  int cudnn_version = 0;

  Device device() const { return Device{kind, device_index}; }

  // Stable 64-bit fingerprint of what decides kernel speed: kind, device name, arch,
  // SM count, driver, runtime, cuBLAS and cuDNN versions. The device index and the
  // memory size are left out: two identical GPUs share records.
  uint64_t fingerprint() const;
  // The same without the cuBLAS and cuDNN versions: what decides the speed of a kernel of
  // our own, which calls neither library. A record of such an implementation holds on any
  // target of the same platform (records::Database::SetLibraryUse): a process that loads
  // another cuDNN, as PyTorch does, still uses the records of the own kernels.
  uint64_t platform_fingerprint() const;
  // "cuda/sm_90": records with the same arch key but another fingerprint may be used
  // when transfer is allowed (same arch, other device or library versions).
  std::string arch_key() const;
  // One line: "cuda:0 NVIDIA H200 sm_90 132 SMs 139.8 GiB, driver 13000 ...".
  std::string ToString() const;
};

// The run-time vendor libraries whose version decides an implementation's speed; kernels
// compiled into opsched (CUB's included) depend on neither.
struct LibraryUse {
  bool cublas = true;
  bool cudnn = true;
};
// The libraries whose versions differ between (cublas_a, cudnn_a) and (cublas_b, cudnn_b).
inline LibraryUse DifferingLibraries(int cublas_a, int cudnn_a, int cublas_b, int cudnn_b) {
  return LibraryUse{.cublas = cublas_a != cublas_b, .cudnn = cudnn_a != cudnn_b};
}
// True when an implementation that calls `calls` calls one of `libraries`: its records
// and predictions made with other versions of those do not hold.
inline bool CallsAny(const LibraryUse& calls, const LibraryUse& libraries) {
  return (calls.cublas && libraries.cublas) || (calls.cudnn && libraries.cudnn);
}

// The CPU this process runs on.
Target CpuTarget();
// The target of a device: CPU, or the properties of a CUDA device (an error when the
// device does not exist or the build has no GPU support).
StatusOr<Target> QueryTarget(const Device& device);
// Every device this process can use: the CPU first, then each GPU.
std::vector<Target> ListTargets();
// The default target of tuning and benchmarks: the first GPU, else the CPU.
Target DefaultTarget();

}  // namespace opsched
