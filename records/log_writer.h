// LogWriter: appends records to a log. Each record is one write() of a whole frame on
// an O_APPEND descriptor under an exclusive flock, so any number of processes may append
// to one log at once; a crash can tear only the frame being written.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "core/status.h"
#include "records/records.pb.h"

namespace opsched::records {

class LogWriter {
 public:
  // Opens (creating with a header when missing or empty) the log at `path`. Refuses a
  // file that is not a records log or has a newer format version, leaving it untouched.
  static StatusOr<std::unique_ptr<LogWriter>> Open(const std::string& path);
  ~LogWriter();

  // Appends one record (format_version is set to this build's).
  Status Append(const Record& record);
  // Appends one already-serialized Record.
  Status AppendPayload(std::string_view payload);
  // Appends many serialized records with one write (merge, compact, import, tests).
  Status AppendPayloads(const std::vector<std::string>& payloads);
  // fsync()s the log (for callers that need durability beyond a process crash).
  Status Sync();
  const std::string& path() const { return path_; }

 private:
  LogWriter(std::string path, int fd) : path_(std::move(path)), fd_(fd) {}
  Status EnsureHeaderLocked();

  std::string path_;
  int fd_ = -1;
};

}  // namespace opsched::records
