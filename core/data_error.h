// Data errors: an op fails because of the values of its inputs, not their shapes — an
// out-of-range scatter index. On a GPU the kernels report them through error slots
// (core/error_slot.h); a CPU implementation returns them from Run, marked with
// MarkDataError, so that the Runtime treats both alike (DeviceErrors::kDeferred holds the
// error for Synchronize(); kSynchronous returns it from the call).
#pragma once

#include "core/status.h"

namespace opsched {

// `status` marked as a data error (an OK status stays OK).
Status MarkDataError(Status status);
// True when `status` was marked by MarkDataError.
bool IsDataError(const Status& status);

}  // namespace opsched
