// core/gpu/l2_flush_kernels.h in a build without GPU support.
#include "core/gpu/l2_flush_kernels.h"

namespace opsched::gpu {

Status ReadBufferAsync(const void*, size_t, void*) {
  return absl::UnimplementedError("this build has no GPU support (L2 read flush)");
}

}  // namespace opsched::gpu
