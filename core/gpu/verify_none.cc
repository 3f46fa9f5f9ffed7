// core/gpu/verify.h in a build without GPU support: every call says so (nothing calls
// them there, since no op registers a device verification without a GPU build).
#include "core/gpu/verify.h"

namespace opsched::gpu {
namespace {

Status NoGpu() { return absl::UnimplementedError("this build has no GPU support (device verification)"); }

}  // namespace

Status Fill(const Tensor&, uint64_t, uint64_t, const FillOptions&, void*) { return NoGpu(); }
Status CopyTensor(const Tensor&, const Tensor&, void*) { return NoGpu(); }
StatusOr<uint64_t> Fingerprint(const Tensor&, void*) { return NoGpu(); }
StatusOr<Mismatch> CompareClose(const Tensor&, const double*, const double*, double, const CloseBound&, void*) {
  return NoGpu();
}
StatusOr<double> MaxNonNegative(const Device&, const double*, int64_t, void*) { return NoGpu(); }
StatusOr<double> ReadElement(const Tensor&, int64_t, void*) { return NoGpu(); }
Status ReadDoubles(const double*, int64_t, double*, void*) { return NoGpu(); }

}  // namespace opsched::gpu
