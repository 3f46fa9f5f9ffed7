// Workspace memory for implementations. A consumer may supply its own allocator (for
// example one backed by its framework's caching allocator); the default keeps one
// grow-only buffer per stream, so calls allocate only while the workspace grows.
#pragma once

#include <cstddef>
#include <map>
#include <mutex>

#include "core/buffer.h"
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
};

class CachingWorkspaceAllocator : public WorkspaceAllocator {
 public:
  StatusOr<void*> Get(const Stream& stream, size_t bytes) override;
  // Bytes held across all streams.
  size_t held_bytes() const;

 private:
  mutable std::mutex mu_;
  std::map<std::pair<Device, void*>, Buffer> buffers_;
};

}  // namespace opsched
