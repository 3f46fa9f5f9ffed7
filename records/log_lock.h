// The append lock of a records log, and how rewrites coordinate with appenders.
//
// The lock is an exclusive flock() on the log file. An appender (LogWriter) holds it for
// each write; a rewrite of the log (merge, compact, import or repair with the log as
// output) holds it from before it reads the old file until the new file has been renamed
// over it. Whoever takes the lock then checks that the path still names the file it
// locked: when a rewrite replaced the file meanwhile (or it was removed), the path is
// reopened and locked again. So an appender that waited on a rewrite writes into the
// new file, and a rewrite never drops a record appended before it took the lock.
#pragma once

#include <string>

#include "core/status.h"

namespace opsched::records {

// Takes the exclusive lock on `fd` (opening `path` with `flags` first when fd < 0) and
// makes sure `path` names the locked file, reopening and relocking as often as needed.
// Returns the locked descriptor: `fd` itself, or a new one after `fd` was closed. On an
// error every descriptor it opened is closed and `fd` too.
StatusOr<int> LockCurrentFile(const std::string& path, int fd, int flags);
// Releases the lock taken by LockCurrentFile (the descriptor stays open).
void UnlockFile(int fd);

// The lock held for a rewrite of the log at `path`: the file is opened read-only
// (created empty when missing, so that an appender that creates it meanwhile waits for
// the rewrite too) and locked until destruction.
class LogLock {
 public:
  static StatusOr<LogLock> Acquire(const std::string& path);
  LogLock(LogLock&& other) noexcept;
  LogLock& operator=(LogLock&&) = delete;
  ~LogLock();

  // True when Acquire created the file (it is removed again by Abandon()).
  bool created() const { return created_; }
  // For a rewrite that failed: removes the file Acquire created, if it is still empty.
  void Abandon();

 private:
  LogLock(std::string path, int fd, bool created)
      : path_(std::move(path)), fd_(fd), created_(created) {}

  std::string path_;
  int fd_ = -1;
  bool created_ = false;
};

}  // namespace opsched::records
