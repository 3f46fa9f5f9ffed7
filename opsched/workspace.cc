#include "opsched/workspace.h"

#include <algorithm>
#include <utility>

#include "core/gpu/gpu_backend.h"

namespace opsched {

void CachingWorkspaceAllocator::FreeFinished() {
  outgrown_.erase(std::remove_if(outgrown_.begin(), outgrown_.end(),
                                 [](const Outgrown& o) {
                                   if (o.keep) return false;
                                   StatusOr<bool> done = o.done.Done();
                                   return done.ok() && *done;
                                 }),
                  outgrown_.end());
}

StatusOr<void*> CachingWorkspaceAllocator::Get(const Stream& stream, size_t bytes) {
  if (bytes == 0) return nullptr;
  bool capturing = false;
  if (!stream.device().is_cpu()) {
    OPSCHED_ASSIGN_OR_RETURN(capturing, gpu::StreamCapturing(stream.native()));
  }
  return Get(stream, bytes, capturing);
}

StatusOr<void*> CachingWorkspaceAllocator::Get(const Stream& stream, size_t bytes, bool capturing) {
  if (bytes == 0) return nullptr;
  const bool gpu = !stream.device().is_cpu();
  capturing = gpu && capturing;
  std::lock_guard<std::mutex> lock(mu_);
  StreamBuffer& held = buffers_[{stream.device(), stream.native()}];
  if (held.buffer.size() < bytes) {
    // Querying events and freeing memory are not allowed while a stream is captured.
    if (gpu && !capturing) FreeFinished();
    OPSCHED_ASSIGN_OR_RETURN(Buffer bigger, Buffer::AllocateDuringCapture(stream.device(), bytes));
    if (gpu && held.buffer.size() > 0) {
      // Work queued on this stream may still use the old buffer: it goes once the stream
      // passes an event recorded now (CPU work ran inline, so there it goes at once). A
      // buffer a graph captured stays for the allocator's life.
      const bool keep = held.captured || capturing;
      Event done;
      if (!keep) {
        OPSCHED_ASSIGN_OR_RETURN(done, Event::Create(stream.device()));
        OPSCHED_RETURN_IF_ERROR(done.Record(stream));
      }
      outgrown_.push_back(Outgrown{std::move(held.buffer), std::move(done), keep});
    }
    held.buffer = std::move(bigger);
    held.captured = false;
  }
  if (capturing) held.captured = true;
  return held.buffer.data();
}

size_t CachingWorkspaceAllocator::held_bytes() const {
  std::lock_guard<std::mutex> lock(mu_);
  size_t total = 0;
  for (const auto& [key, held] : buffers_) total += held.buffer.size();
  for (const Outgrown& o : outgrown_) total += o.buffer.size();
  return total;
}

}  // namespace opsched
