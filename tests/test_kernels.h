// Small kernels the runtime tests launch (a timed spin and an element-wise update), and
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

// Starts capturing `stream` (global mode: capture-unsafe calls on any thread fail).
Status BeginCapture(const Stream& stream);
// Ends the capture and instantiates the graph (an opaque executable graph).
StatusOr<void*> EndCapture(const Stream& stream);
// Launches an instantiated graph on `stream`.
Status ReplayGraph(void* graph, const Stream& stream);
void DestroyGraph(void* graph);

}  // namespace opsched::testing
