// The C API's error reporting: codes returned, messages kept per thread.
#include <string>

#include "core/data_error.h"
#include "opsched/c_api_internal.h"

namespace opsched::capi {
namespace {

thread_local std::string last_error;

}  // namespace

opsched_status Finish(const Status& status) noexcept {
  if (status.ok()) return OPSCHED_OK;
  try {
    last_error.assign(status.message().data(), status.message().size());
  } catch (...) {
    last_error.clear();  // no memory for the message; the code still tells
  }
  // A data error (an out-of-range index found while running) keeps its own code, so
  // that callers can tell it from a mistake in the arguments.
  if (IsDataError(status)) return OPSCHED_OUT_OF_RANGE;
  return static_cast<opsched_status>(status.code());
}

}  // namespace opsched::capi

extern "C" const char* opsched_last_error(void) { return opsched::capi::last_error.c_str(); }
