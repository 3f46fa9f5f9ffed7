// Small kernels the runtime tests launch: a timed spin and an element-wise update.
#pragma once

#include <cstdint>

#include "core/status.h"
#include "core/stream.h"

namespace opsched::testing {

// Keeps one thread busy for about `nanoseconds` of device wall time.
Status LaunchSpin(const Stream& stream, int64_t nanoseconds);
// data[i] = data[i] * 2 + 1 for i < n.
Status LaunchTwiceOnePlus(const Stream& stream, float* data, int64_t n);

}  // namespace opsched::testing
