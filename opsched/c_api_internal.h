// What the C API's translation units share (not installed, not part of the API): the
// runtime handle, the boundary guard that turns a Status or an exception into a code and
// this thread's last error, and the conversion of C tensors into Tensors.
#pragma once

#include <cstring>
#include <exception>
#include <memory>
#include <new>
#include <string>
#include <string_view>

#include "core/status.h"
#include "core/stream.h"
#include "core/tensor.h"
#include "opsched/c_api.h"
#include "opsched/runtime.h"

struct opsched_runtime {
  std::unique_ptr<opsched::Runtime> runtime;
  std::string target;       // runtime->target().ToString()
  std::string model_error;  // runtime->model_status()'s message, "" when OK
};

namespace opsched::capi {

// Keeps `status` as this thread's last error when it is not OK; returns its code.
opsched_status Finish(const Status& status) noexcept;

// Runs `body` (returning a Status) so that nothing but a code leaves: an exception
// becomes an error (ResourceExhausted for bad_alloc, Internal otherwise).
template <typename Body>
opsched_status Guard(std::string_view what, Body&& body) noexcept {
  try {
    return Finish(body());
  } catch (const std::bad_alloc&) {
    return Finish(absl::ResourceExhaustedError("out of host memory"));
  } catch (const std::exception& e) {
    return Finish(absl::InternalError(std::string(what) + ": unexpected exception: " + e.what()));
  } catch (...) {
    return Finish(absl::InternalError(std::string(what) + ": unexpected exception"));
  }
}

// A caller's versioned option struct (its first field `struct_size`): a copy of `given`'s
// fields up to its struct_size, the rest as `init` sets them (all of them when `given` is
// null). A struct_size below `min_size` or beyond this version's is InvalidArgument,
// "PREFIX struct_size N is not that of any version (call INIT_NAME)".
template <typename T>
StatusOr<T> ReadVersioned(const T* given, void (*init)(T*), size_t min_size, std::string_view prefix,
                          std::string_view init_name) {
  T out;
  init(&out);
  if (given == nullptr) return out;
  if (given->struct_size < min_size || given->struct_size > sizeof(T)) {
    return absl::InvalidArgumentError(std::string(prefix) + " struct_size " + std::to_string(given->struct_size) +
                                      " is not that of any version (call " + std::string(init_name) + ")");
  }
  std::memcpy(&out, given, given->struct_size);
  out.struct_size = sizeof(T);
  return out;
}

// The runtime of a handle, or InvalidArgument when it is null.
StatusOr<Runtime*> RuntimeOf(const opsched_runtime* handle, std::string_view what);

// The caller's native stream on the runtime's device (the CPU has none).
Stream StreamOf(const Runtime& runtime, void* native);

// The device of a C device kind and index.
StatusOr<Device> DeviceFromC(int32_t device_type, int32_t device_index);
// The Tensor `t` describes, checked (non-null, known dtype and device, rank, shape and
// strides within the limits); `name` names it in errors ("scatter: data: ...").
StatusOr<Tensor> TensorFromC(const opsched_tensor* t, std::string_view what, std::string_view name);

}  // namespace opsched::capi
