#include "ops/conv2d/conv2d_register.h"

namespace opsched::conv2d {

Status Register(Registry& registry) {
  OPSCHED_RETURN_IF_ERROR(RegisterDef(registry));
  OPSCHED_RETURN_IF_ERROR(RegisterCpu(registry));
  OPSCHED_RETURN_IF_ERROR(RegisterCpuGemm(registry));
#if defined(OPSCHED_WITH_CUDA)
  OPSCHED_RETURN_IF_ERROR(RegisterCudaDepthwiseImpls(registry));
  OPSCHED_RETURN_IF_ERROR(RegisterDeviceVerification(registry));
#endif
#if defined(OPSCHED_WITH_CUBLAS)
  OPSCHED_RETURN_IF_ERROR(RegisterCudaImpls(registry));
#endif
#if defined(OPSCHED_WITH_CUDNN)
  OPSCHED_RETURN_IF_ERROR(RegisterCudnn(registry));
  OPSCHED_RETURN_IF_ERROR(RegisterCudnnBackward(registry));
  OPSCHED_RETURN_IF_ERROR(RegisterCudnnGraphImpls(registry));
#endif
  return absl::OkStatus();
}

}  // namespace opsched::conv2d
