#include "records/log_rewrite.h"

#include <sys/stat.h>

#include "core/atomic_file.h"
#include "core/format.h"
#include "records/log_format.h"
#include "records/log_lock.h"
#include "records/log_reader.h"

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
  // Only a log (damaged header included: repair rewrites it) is replaced: not a file of
  // something else, nor a log of a newer format version whose records would be lost.
  struct stat st;
  if (::stat(path.c_str(), &st) == 0 && st.st_size > 0) {
    StatusOr<LogReader> existing = LogReader::Open(path);
    if (!existing.ok()) {
      lock.Abandon();
      return absl::FailedPreconditionError(fmt::format("{}; refusing to replace it", existing.status().message()));
    }
  }
  StatusOr<std::string> bytes = produce();
  Status written = bytes.ok() ? WriteFileAtomically(path, *bytes) : bytes.status();
  if (!written.ok()) lock.Abandon();
  return written;
}

}  // namespace opsched::records
