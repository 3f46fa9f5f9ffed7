#include "records/log_rewrite.h"

#include "core/atomic_file.h"
#include "core/format.h"
#include "records/log_format.h"
#include "records/log_lock.h"

namespace opsched::records {

StatusOr<std::string> EncodeFrames(const std::vector<std::string>& payloads) {
  size_t total = 0;
  for (const std::string& payload : payloads) {
    if (payload.size() > kMaxPayloadBytes) {
      return absl::InvalidArgumentError(fmt::format(
          "record of {} bytes exceeds the {} byte limit", payload.size(), kMaxPayloadBytes));
    }
    total += kFrameHeaderSize + payload.size();
  }
  std::string bytes;
  bytes.reserve(total);
  for (const std::string& payload : payloads) bytes += EncodeFrame(payload);
  return bytes;
}

StatusOr<std::string> EncodeLog(const std::vector<std::string>& payloads) {
  OPSCHED_ASSIGN_OR_RETURN(std::string frames, EncodeFrames(payloads));
  return EncodeHeader() + frames;
}

Status RewriteLog(const std::string& path, const std::function<StatusOr<std::string>()>& produce) {
  OPSCHED_ASSIGN_OR_RETURN(LogLock lock, LogLock::Acquire(path));
  StatusOr<std::string> bytes = produce();
  Status written = bytes.ok() ? WriteFileAtomically(path, *bytes) : bytes.status();
  if (!written.ok()) lock.Abandon();
  return written;
}

}  // namespace opsched::records
