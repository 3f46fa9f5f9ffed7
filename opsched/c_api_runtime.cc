// The C API's runtime: options, creation and destruction, what the runtime runs on,
// explanations, the log level and synchronisation.
#include <cstdlib>
#include <cstring>

#include "core/format.h"
#include "core/log.h"
#include "opsched/c_api_internal.h"

using opsched::capi::Finish;
using opsched::capi::Guard;

namespace opsched::capi {
namespace {

StatusOr<RuntimeOptions> ToRuntimeOptions(const opsched_runtime_options& o) {
  RuntimeOptions options;
  if (o.device_type != -1) {
    OPSCHED_ASSIGN_OR_RETURN(const Device device, DeviceFromC(o.device_type, o.device_index));
    OPSCHED_ASSIGN_OR_RETURN(options.target, QueryTarget(device));
  }
  if (o.num_record_files < 0 || (o.num_record_files > 0 && o.record_files == nullptr)) {
    return absl::InvalidArgumentError(
        fmt::format("runtime options: {} record files but no list", o.num_record_files));
  }
  for (int32_t i = 0; i < o.num_record_files; ++i) {
    if (o.record_files[i] == nullptr) {
      return absl::InvalidArgumentError(fmt::format("runtime options: record file {} is null", i));
    }
    options.record_files.emplace_back(o.record_files[i]);
  }
  if (o.model_file != nullptr) options.model_file = o.model_file;
  if (o.record_untuned_file != nullptr) options.record_untuned_file = o.record_untuned_file;
  options.dispatch.deterministic = o.deterministic != 0;
  options.dispatch.allow_transferred_records = o.allow_transferred_records != 0;
  options.device_errors = o.synchronous_errors != 0 ? DeviceErrors::kSynchronous : DeviceErrors::kDeferred;
  return options;
}

}  // namespace
}  // namespace opsched::capi

extern "C" {

int32_t opsched_c_api_version(void) { return OPSCHED_C_API_VERSION; }

opsched_status opsched_set_log_level(const char* level) {
  return Guard("set log level", [&]() -> opsched::Status {
    if (level == nullptr) return absl::InvalidArgumentError("set log level: the level is null");
    const spdlog::level::level_enum parsed = spdlog::level::from_str(level);
    // from_str answers "off" for any name it does not know.
    if (parsed == spdlog::level::off && std::strcmp(level, "off") != 0) {
      return absl::InvalidArgumentError(fmt::format(
          "set log level: unknown level '{}' (trace, debug, info, warn, error, off)", level));
    }
    opsched::Log().set_level(parsed);
    return absl::OkStatus();
  });
}

void opsched_runtime_options_init(opsched_runtime_options* options) {
  if (options == nullptr) return;
  std::memset(options, 0, sizeof(*options));
  options->struct_size = sizeof(*options);
  options->device_type = -1;
}

opsched_status opsched_runtime_create(const opsched_runtime_options* options, opsched_runtime** runtime) {
  return Guard("runtime create", [&]() -> opsched::Status {
    if (runtime == nullptr) return absl::InvalidArgumentError("runtime create: the result pointer is null");
    *runtime = nullptr;
    OPSCHED_ASSIGN_OR_RETURN(const opsched_runtime_options o,
                             opsched::capi::ReadVersioned(options, opsched_runtime_options_init,
                                                          offsetof(opsched_runtime_options, device_type),
                                                          "runtime options:", "opsched_runtime_options_init"));
    OPSCHED_ASSIGN_OR_RETURN(opsched::RuntimeOptions converted, opsched::capi::ToRuntimeOptions(o));
    OPSCHED_ASSIGN_OR_RETURN(std::unique_ptr<opsched::Runtime> created,
                             opsched::Runtime::Create(std::move(converted)));
    // Records of another device or other library versions are of no use here: say so.
    if (!created->records_note().empty()) opsched::Log().warn("{}", created->records_note());
    auto handle = std::make_unique<opsched_runtime>();
    handle->target = created->target().ToString();
    handle->model_error = std::string(opsched::Message(created->model_status()));
    handle->runtime = std::move(created);
    *runtime = handle.release();
    return absl::OkStatus();
  });
}

void opsched_runtime_destroy(opsched_runtime* runtime) {
  try {
    delete runtime;
  } catch (...) {
    Finish(absl::InternalError("runtime destroy: unexpected exception"));
  }
}

opsched_status opsched_runtime_device(const opsched_runtime* runtime, int32_t* device_type,
                                      int32_t* device_index) {
  return Guard("runtime device", [&]() -> opsched::Status {
    OPSCHED_ASSIGN_OR_RETURN(opsched::Runtime* rt,
                             opsched::capi::RuntimeOf(runtime, "runtime device"));
    if (device_type == nullptr || device_index == nullptr) {
      return absl::InvalidArgumentError("runtime device: a result pointer is null");
    }
    *device_type = static_cast<int32_t>(rt->target().kind);
    *device_index = rt->target().device_index;
    return absl::OkStatus();
  });
}

const char* opsched_runtime_target(const opsched_runtime* runtime) {
  return runtime == nullptr ? "" : runtime->target.c_str();
}

const char* opsched_runtime_model_error(const opsched_runtime* runtime) {
  return runtime == nullptr ? "" : runtime->model_error.c_str();
}

opsched_status opsched_synchronize(opsched_runtime* runtime, void* stream) {
  return Guard("synchronize", [&]() -> opsched::Status {
    OPSCHED_ASSIGN_OR_RETURN(opsched::Runtime* rt, opsched::capi::RuntimeOf(runtime, "synchronize"));
    return rt->Synchronize(opsched::capi::StreamOf(*rt, stream));
  });
}

opsched_status opsched_explain(const opsched_runtime* runtime, const char* line, char** text) {
  return Guard("explain", [&]() -> opsched::Status {
    if (text == nullptr) return absl::InvalidArgumentError("explain: the result pointer is null");
    *text = nullptr;
    OPSCHED_ASSIGN_OR_RETURN(opsched::Runtime* rt,
                             opsched::capi::RuntimeOf(runtime, "explain"));
    if (line == nullptr) return absl::InvalidArgumentError("explain: the workload line is null");
    OPSCHED_ASSIGN_OR_RETURN(const opsched::Explanation e, rt->Explain(std::string_view(line)));
    const std::string out = e.ToString();
    char* copy = static_cast<char*>(std::malloc(out.size() + 1));
    if (copy == nullptr) return absl::ResourceExhaustedError("explain: out of host memory");
    std::memcpy(copy, out.c_str(), out.size() + 1);
    *text = copy;
    return absl::OkStatus();
  });
}

void opsched_free_string(char* text) { std::free(text); }

}  // extern "C"
