#include "tuner/l2_flusher.h"

#include "core/gpu/gpu_backend.h"
#include "core/gpu/l2_flush_kernels.h"

namespace opsched {

StatusOr<L2Flusher> L2Flusher::Create(L2Flush kind, const Stream& stream, int64_t l2_bytes) {
  L2Flusher f;
  const Device& device = stream.device();
  if (!device.is_gpu() || kind == L2Flush::kNone) return f;
  const size_t bytes = 2 * static_cast<size_t>(l2_bytes > 0 ? l2_bytes : int64_t(64) << 20);
  OPSCHED_ASSIGN_OR_RETURN(f.buffer_, Buffer::Allocate(device, bytes));
  if (kind == L2Flush::kRead) {
    // Equal bytes: the read kernel's fold of them never meets its store's condition.
    OPSCHED_RETURN_IF_ERROR(gpu::MemsetAsync(f.buffer_.data(), 0, bytes, stream.native()));
  }
  f.kind_ = kind;
  return f;
}

Status L2Flusher::Flush(const Stream& stream, int repetition) const {
  switch (kind_) {
    case L2Flush::kRead: return gpu::ReadBufferAsync(buffer_.data(), buffer_.size(), stream.native());
    case L2Flush::kOverwrite:
      return gpu::MemsetAsync(buffer_.data(), repetition & 0xff, buffer_.size(), stream.native());
    case L2Flush::kNone: break;
  }
  return absl::OkStatus();
}

}  // namespace opsched
