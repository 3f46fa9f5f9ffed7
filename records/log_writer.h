// LogWriter: appends records to a log. Each record is one write() of a whole frame on
// an O_APPEND descriptor under the log's append lock (records/log_lock.h), so any number
// of processes may append to one log at once; a crash can tear only the frame being
// written. When a rewrite (merge, compact, import, repair) replaced the log since the
// last append, the writer reopens the path and appends to the new file.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "core/status.h"
#include "records/records.pb.h"

namespace opsched::records {

class LogWriter {
 public:
  // Opens (creating with a header when missing or empty) the log at `path`. Refuses a
  // file that is not a records log, has a newer format version or a damaged header
  // (naming `opsched records repair`), leaving it untouched.
  static StatusOr<std::unique_ptr<LogWriter>> Open(const std::string& path);
  ~LogWriter();

  // Appends one record (format_version is set to this build's).
  Status Append(const Record& record);
  // Appends one already-serialized Record.
  Status AppendPayload(std::string_view payload);
  // Appends many serialized records with one write (tests, benchmarks).
  Status AppendPayloads(const std::vector<std::string>& payloads);
  // fsync()s the log (for callers that need durability beyond a process crash).
  Status Sync();
  const std::string& path() const { return path_; }

 private:
  explicit LogWriter(std::string path) : path_(std::move(path)) {}
  // Takes the append lock on the file the path names now (reopening it when replaced)
  // and checks its header when it is not the file checked last.
  Status LockCurrent();
  Status CheckHeaderLocked();

  std::string path_;
  int fd_ = -1;
  // The file whose header was checked last.
  bool checked_ = false;
  uint64_t checked_dev_ = 0;
  uint64_t checked_ino_ = 0;
};

}  // namespace opsched::records
