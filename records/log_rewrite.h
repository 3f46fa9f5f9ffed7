// Rewriting a records log in place (merge, compact, import, repair): the new log is
// produced while the old log's append lock is held (records/log_lock.h) and written
// atomically (core/atomic_file.h). Appenders that wait meanwhile append to the new file
// afterwards; a failure leaves the old log as it was.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "core/status.h"

namespace opsched::records {

// One frame per payload, ready to append. An error when a payload exceeds the frame
// limit.
StatusOr<std::string> EncodeFrames(const std::vector<std::string>& payloads);
// A whole log: the header, then the frames.
StatusOr<std::string> EncodeLog(const std::vector<std::string>& payloads);

// Replaces the log at `path` (created when missing) with the bytes `produce` returns.
// An existing non-empty `path` that is not a records log, or has a newer format
// version, is refused and left untouched.
// `produce` runs under the lock, so it may read the old log at `path`: nothing is
// appended between that read and the rename.
Status RewriteLog(const std::string& path, const std::function<StatusOr<std::string>()>& produce);

}  // namespace opsched::records
