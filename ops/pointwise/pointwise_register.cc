#include "ops/pointwise/pointwise_register.h"

namespace opsched::pointwise {

Status Register(Registry& registry) {
  OPSCHED_RETURN_IF_ERROR(RegisterDef(registry));
  OPSCHED_RETURN_IF_ERROR(RegisterCpu(registry));
  OPSCHED_RETURN_IF_ERROR(RegisterCpuSpecialised(registry));
  OPSCHED_RETURN_IF_ERROR(RegisterCpuBatchNorm(registry));
#if defined(OPSCHED_WITH_CUDA)
  OPSCHED_RETURN_IF_ERROR(RegisterCudaImpls(registry));
  OPSCHED_RETURN_IF_ERROR(RegisterDeviceVerification(registry));
#endif
  return absl::OkStatus();
}

}  // namespace opsched::pointwise
