#include "ops/scatter/scatter_register.h"

namespace opsched::scatter {

Status Register(Registry& registry) {
  OPSCHED_RETURN_IF_ERROR(RegisterDef(registry));
  OPSCHED_RETURN_IF_ERROR(RegisterCpu(registry));
#if defined(OPSCHED_WITH_CUDA)
  OPSCHED_RETURN_IF_ERROR(RegisterCudaImpls(registry));
  OPSCHED_RETURN_IF_ERROR(RegisterDeviceVerification(registry));
#endif
  return absl::OkStatus();
}

}  // namespace opsched::scatter
