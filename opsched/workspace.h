// Workspace memory for implementations. A consumer may supply its own allocator (for
// example one backed by its framework's caching allocator), or pass a workspace to each
// call (Runtime::Run's CUB-style overload); the default keeps one grow-only buffer per
// stream, so calls allocate only while the workspace grows. Growing never synchronises
// the host: the outgrown buffer is freed once the stream's work before the growth has
// finished (an event marks it), and one that a CUDA graph captured is kept for the life
// of the allocator, since the graph may be replayed at any time.
#pragma once

#include <cstddef>
#include <map>
#include <mutex>

#include <vector>

#include "core/buffer.h"
#include "core/event.h"
#include "core/status.h"
#include "core/stream.h"

namespace opsched {

class WorkspaceAllocator {
 public:
  virtual ~WorkspaceAllocator() = default;
  // Memory of at least `bytes` on the stream's device, for work queued on `stream`.
  // It stays valid for that work; the next Get for the same stream may reuse it, which
  // is safe because the stream runs its work in order.
  virtual StatusOr<void*> Get(const Stream& stream, size_t bytes) = 0;
  // The same, told whether the stream is being captured into a CUDA graph (the Runtime
  // knows it already): an allocator that needs to know overrides this one and need not
  // ask the driver again. By default the capture state is not needed.
  virtual StatusOr<void*> Get(const Stream& stream, size_t bytes, bool /*capturing*/) { return Get(stream, bytes); }
};

class CachingWorkspaceAllocator : public WorkspaceAllocator {
 public:
  // Asks the driver whether the stream is being captured, then as below.
  StatusOr<void*> Get(const Stream& stream, size_t bytes) override;
  StatusOr<void*> Get(const Stream& stream, size_t bytes, bool capturing) override;
  // Bytes held across all streams, outgrown buffers not yet freed included.
  size_t held_bytes() const;

 private:
  struct StreamBuffer {
    Buffer buffer;
    bool captured = false;  // handed to a call under capture: a graph may use it
  };
  struct Outgrown {
    Buffer buffer;
    Event done;        // recorded after the last work that may use it
    bool keep = false;  // captured by a graph: never freed before the allocator
  };
  // Frees the outgrown buffers whose work has finished. Needs mu_.
  void FreeFinished();

  mutable std::mutex mu_;
  std::map<std::pair<Device, void*>, StreamBuffer> buffers_;
  std::vector<Outgrown> outgrown_;
};

}  // namespace opsched
