// LogReader: reads a records log, keeping every intact record. A torn tail or a
// corrupted frame is skipped with a warning naming its byte offset, and reading
// resynchronises on the next valid frame.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "core/status.h"
#include "records/records.pb.h"

namespace opsched::records {

struct LogIssue {
  uint64_t offset;   // first byte of the skipped stretch
  uint64_t length;   // bytes skipped
  std::string what;  // "torn frame at end of file", "checksum mismatch", ...
};

struct LogScan {
  uint32_t format_version = 0;
  int64_t intact = 0;   // frames whose checksums hold
  int64_t skipped = 0;  // corrupted stretches skipped
  int64_t unparsable = 0;  // intact frames whose payload is not a Record
  std::vector<LogIssue> issues;
};

class LogReader {
 public:
  // Maps the log at `path`. Errors: the file cannot be read; it is not a records log;
  // its format version is newer than this build reads. A zero-byte file is an empty log.
  static StatusOr<LogReader> Open(const std::string& path);
  LogReader(LogReader&& other) noexcept;
  LogReader& operator=(LogReader&& other) = delete;
  ~LogReader();

  uint32_t format_version() const { return version_; }
  const std::string& path() const { return path_; }
  uint64_t size() const { return size_; }

  // Calls `visit(offset, payload)` for every intact frame in file order; fills `scan`.
  // Logs one warning per skipped stretch.
  void ForEachFrame(const std::function<void(uint64_t offset, std::string_view payload)>& visit,
                    LogScan* scan) const;
  // The payload of the frame at `offset` (as passed to visit); an error when the frame
  // there is not intact.
  StatusOr<std::string_view> FrameAt(uint64_t offset) const;
  // Drops the mapped pages from this process's memory (they are read again from the
  // page cache on the next access).
  void ReleasePages() const;

 private:
  LogReader() = default;
  // Length of the intact frame at `pos` (header included), or 0.
  uint64_t IntactFrameAt(uint64_t pos) const;

  std::string path_;
  const char* data_ = nullptr;
  uint64_t size_ = 0;
  uint32_t version_ = 0;
};

// Reads every intact, parsable record of the log at `path`.
Status ReadRecords(const std::string& path,
                   const std::function<void(const Record& record, uint64_t offset)>& visit,
                   LogScan* scan = nullptr);

}  // namespace opsched::records
