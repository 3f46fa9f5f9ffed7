// UntunedRecorder: the file of RuntimeOptions::record_untuned_file (OPSCHED_RECORD_UNTUNED
// in Python): every workload the Runtime serves without an exact record, one canonical
// workload line each, deduplicated, so that `opsched tune --suite FILE` tunes exactly the
// shapes a model used. The file is a suite (a header comment, then workload lines).
//
// Crash-safe: each line is appended by one write() under an exclusive flock() and made
// durable (fdatasync) before the lock is released; a last line without its newline (torn
// by a machine failure, or written by hand) is ended by the next writer, never removed. Several processes may share one file: each
// reads what the others appended before it decides whether a line is new.
#pragma once

#include <sys/types.h>

#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <string_view>

#include "core/status.h"

namespace opsched {

class UntunedRecorder {
 public:
  // Opens `path`, creating it (with its header comment) when missing. Fails with a clear
  // error when it cannot be created, read or locked (a folder, no permission).
  static StatusOr<std::unique_ptr<UntunedRecorder>> Open(std::string path);
  ~UntunedRecorder();
  UntunedRecorder(const UntunedRecorder&) = delete;
  UntunedRecorder& operator=(const UntunedRecorder&) = delete;

  // Appends `line` (one workload, no newline) unless the file has it already.
  // Thread-safe. Returns true when the line was new.
  StatusOr<bool> Note(std::string_view line);

  const std::string& path() const { return path_; }

 private:
  explicit UntunedRecorder(std::string path) : path_(std::move(path)) {}
  // With the lock held: takes in the lines appended since the last look (by any
  // process), ending a last line that lacks its newline. A replaced file is read from
  // its start.
  Status CatchUp();

  std::mutex mu_;
  const std::string path_;
  int fd_ = -1;
  dev_t device_ = 0;
  ino_t inode_ = 0;
  off_t known_size_ = 0;
  std::set<std::string, std::less<>> seen_;
};

}  // namespace opsched
