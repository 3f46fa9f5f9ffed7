#include "opsched/workspace.h"

namespace opsched {

StatusOr<void*> CachingWorkspaceAllocator::Get(const Stream& stream, size_t bytes) {
  if (bytes == 0) return nullptr;
  std::lock_guard<std::mutex> lock(mu_);
  Buffer& buffer = buffers_[{stream.device(), stream.native()}];
  if (buffer.size() < bytes) {
    // Work queued on this stream may still use the old buffer: finish it first.
    OPSCHED_RETURN_IF_ERROR(stream.Synchronize());
    buffer.Reset();
    OPSCHED_ASSIGN_OR_RETURN(buffer, Buffer::Allocate(stream.device(), bytes));
  }
  return buffer.data();
}

size_t CachingWorkspaceAllocator::held_bytes() const {
  std::lock_guard<std::mutex> lock(mu_);
  size_t total = 0;
  for (const auto& [key, buffer] : buffers_) total += buffer.size();
  return total;
}

}  // namespace opsched
