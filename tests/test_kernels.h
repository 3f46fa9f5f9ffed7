// Small kernels the runtime tests launch (a timed spin, element-wise updates, the device's
// f16/bf16 conversions), and
// CUDA graph capture of a stream's work.
#pragma once

#include <cstdint>

#include "core/status.h"
#include "core/stream.h"

namespace opsched::testing {

// Keeps one thread busy for about `nanoseconds` of device wall time.
Status LaunchSpin(const Stream& stream, int64_t nanoseconds);
// data[i] = data[i] * 2 + 1 for i < n.
Status LaunchTwiceOnePlus(const Stream& stream, float* data, int64_t n);
// y[i] = x[i] + delta for i < n.
Status LaunchAddScalar(const Stream& stream, const float* x, float* y, int64_t n, float delta);

// The device's f16/bf16 conversions (core/half.h as compiled for the device), for i < n:
// half[i] = FloatToHalf(x[i]), bf16[i] = FloatToBf16(x[i]), back[i] = HalfToFloat(bits[i]).
Status LaunchConversions(const Stream& stream, const float* x, uint16_t* half, uint16_t* bf16,
                         const uint16_t* bits, float* back, int64_t n);

// Starts capturing `stream` (global mode: capture-unsafe calls on any thread fail).
Status BeginCapture(const Stream& stream);
// Ends the capture and instantiates the graph (an opaque executable graph).
StatusOr<void*> EndCapture(const Stream& stream);
// Launches an instantiated graph on `stream`.
Status ReplayGraph(void* graph, const Stream& stream);
void DestroyGraph(void* graph);

}  // namespace opsched::testing
