// C tensors, devices and streams into opsched's own, checked: a caller's mistake becomes an
// InvalidArgument that names the op and tensor, never a crash.
#include "core/format.h"
#include "opsched/c_api_internal.h"

namespace opsched::capi {

StatusOr<Runtime*> RuntimeOf(const opsched_runtime* handle, std::string_view what) {
  if (handle == nullptr || handle->runtime == nullptr) {
    return absl::InvalidArgumentError(fmt::format("{}: the runtime is null", what));
  }
  return handle->runtime.get();
}

Stream StreamOf(const Runtime& runtime, void* native) {
  const Device device = runtime.target().device();
  return Stream::Wrap(device, device.is_cpu() ? nullptr : native);
}

StatusOr<Device> DeviceFromC(int32_t device_type, int32_t device_index) {
  if (device_type < OPSCHED_CPU || device_type > OPSCHED_HIP) {
    return absl::InvalidArgumentError(
        fmt::format("unknown device type {} (0 cpu, 1 cuda, 2 hip)", device_type));
  }
  if (device_index < 0) {
    return absl::InvalidArgumentError(fmt::format("device index {} is negative", device_index));
  }
  const auto kind = static_cast<DeviceKind>(device_type);
  return Device{kind, kind == DeviceKind::kCpu ? 0 : device_index};
}

StatusOr<Tensor> TensorFromC(const opsched_tensor* t, std::string_view what, std::string_view name) {
  const std::string context = fmt::format("{}: {}", what, name);
  if (t == nullptr) return absl::InvalidArgumentError(fmt::format("{} is null", context));
  if (t->dtype < OPSCHED_F32 || t->dtype > OPSCHED_I64) {
    return absl::InvalidArgumentError(
        fmt::format("{} has unknown dtype {} (0 f32, 1 f16, 2 bf16, 3 i32, 4 i64)", context, t->dtype));
  }
  if (t->rank < 0 || t->rank > TensorDesc::kMaxRank) {
    return absl::InvalidArgumentError(
        fmt::format("{} has rank {}, supported ranks are 0 to {}", context, t->rank, TensorDesc::kMaxRank));
  }
  if (t->rank > 0 && t->shape == nullptr) {
    return absl::InvalidArgumentError(fmt::format("{} has rank {} but no shape", context, t->rank));
  }
  const auto dtype = static_cast<DType>(t->dtype);
  const absl::Span<const int64_t> shape(t->shape, static_cast<size_t>(t->rank));
  StatusOr<TensorDesc> desc =
      t->strides == nullptr
          ? TensorDesc::CheckedContiguous(dtype, shape)
          : TensorDesc::Strided(dtype, shape, absl::Span<const int64_t>(t->strides, shape.size()));
  if (!desc.ok()) return Annotate(desc.status(), context);
  StatusOr<Device> device = DeviceFromC(t->device_type, t->device_index);
  if (!device.ok()) return Annotate(device.status(), context);
  return Tensor{*std::move(desc), t->data, *device};
}

}  // namespace opsched::capi
