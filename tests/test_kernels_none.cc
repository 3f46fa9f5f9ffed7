// test_kernels.h in builds without GPU support (the GPU tests skip before calling these).
#include "tests/test_kernels.h"

namespace opsched::testing {

Status LaunchSpin(const Stream&, int64_t) {
  return absl::FailedPreconditionError("built without GPU support");
}

Status LaunchTwiceOnePlus(const Stream&, float*, int64_t) {
  return absl::FailedPreconditionError("built without GPU support");
}

Status LaunchAddScalar(const Stream&, const float*, float*, int64_t, float) {
  return absl::FailedPreconditionError("built without GPU support");
}

Status LaunchConversions(const Stream&, const float*, uint16_t*, uint16_t*, const uint16_t*, float*, int64_t) {
  return absl::FailedPreconditionError("built without GPU support");
}

Status BeginCapture(const Stream&) { return absl::FailedPreconditionError("built without GPU support"); }
StatusOr<void*> EndCapture(const Stream&) { return absl::FailedPreconditionError("built without GPU support"); }
Status ReplayGraph(void*, const Stream&) { return absl::FailedPreconditionError("built without GPU support"); }
void DestroyGraph(void*) {}

}  // namespace opsched::testing
