// Replayed: a Prepared that runs another as a captured CUDA graph once calls repeat.
//
// A small cuDNN call costs more host time than device time (cudnnBackendExecute or the
// legacy call plus its descriptors' checks: 20-60 µs a call for MNIST-sized layers), so
// a loop of such calls waits for the host. When a call repeats the previous call's
// stream, tensors and workspace, Replayed captures the inner Run once, on a stream of its
// own (thread-local capture mode; work other threads queue on the caller's stream
// meanwhile runs as usual), and from then on launches the instantiated graph on the
// caller's stream: one cudaGraphLaunch instead of the library's host work. Any other call
// runs the inner Prepared directly and forgets the graph. It never replays on a stream
// the caller is capturing itself (the caller's graph records the inner work), and a
// capture that fails (the library synchronised, say) turns replay off for this Prepared:
// the call then runs directly. Concurrent callers of one Prepared never wait for each
// other: a call that finds another in progress runs directly.
#pragma once

#include <memory>

#include "registry/implementation.h"

namespace opsched::cudnn {

std::unique_ptr<Prepared> Replayed(std::unique_ptr<Prepared> inner);

}  // namespace opsched::cudnn
