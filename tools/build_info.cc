#include "tools/build_info.h"

#include "core/format.h"
#include "core/version.h"
#include "tools/build_stamp.h"  // OPSCHED_GIT_COMMIT

// The GPU libraries' own version macros, where the build has them (tools/BUILD defines
// OPSCHED_BUILT_WITH_* from the toolkit found by bazel/gpu_configure.bzl).
#ifdef OPSCHED_BUILT_WITH_CUDA
#include <cuda_runtime_api.h>  // CUDART_VERSION
#endif
#ifdef OPSCHED_BUILT_WITH_CUBLAS
#include <cublas_api.h>  // CUBLAS_VER_MAJOR, _MINOR, _PATCH
#endif
#ifdef OPSCHED_BUILT_WITH_CUDNN
#include <cudnn_version.h>  // CUDNN_MAJOR, _MINOR, _PATCHLEVEL
#endif

namespace opsched::tools {

std::string VersionText() {
#ifdef OPSCHED_BUILT_WITH_CUDA
  const std::string cuda = fmt::format("{}.{}", CUDART_VERSION / 1000, CUDART_VERSION % 1000 / 10);
#else
  const std::string cuda = "none";
#endif
#ifdef OPSCHED_BUILT_WITH_CUBLAS
  const std::string cublas = fmt::format("{}.{}.{}", CUBLAS_VER_MAJOR, CUBLAS_VER_MINOR, CUBLAS_VER_PATCH);
#else
  const std::string cublas = "none";
#endif
#ifdef OPSCHED_BUILT_WITH_CUDNN
  const std::string cudnn = fmt::format("{}.{}.{}", CUDNN_MAJOR, CUDNN_MINOR, CUDNN_PATCHLEVEL);
#else
  const std::string cudnn = "none";
#endif
  return fmt::format("opsched {}\ngit commit {}\nbuilt with CUDA {}, cuDNN {}, cuBLAS {}\n", kVersion,
                     OPSCHED_GIT_COMMIT, cuda, cudnn, cublas);
}

}  // namespace opsched::tools
