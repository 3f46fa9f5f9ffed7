#include "ops/reduce/reduce_register.h"

namespace opsched::reduce {

Status Register(Registry& registry) {
  OPSCHED_RETURN_IF_ERROR(RegisterDef(registry));
  OPSCHED_RETURN_IF_ERROR(RegisterCpu(registry));
#if defined(OPSCHED_WITH_CUDA)
  OPSCHED_RETURN_IF_ERROR(RegisterCudaImpls(registry));
  OPSCHED_RETURN_IF_ERROR(RegisterDeviceVerification(registry));
#endif
#if defined(OPSCHED_WITH_CUDNN)
  OPSCHED_RETURN_IF_ERROR(RegisterCudnn(registry));
#endif
  return absl::OkStatus();
}

}  // namespace opsched::reduce
