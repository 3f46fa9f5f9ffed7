// LogReader: reads a records log, keeping every intact record. A torn tail or a
// corrupted frame is skipped with a warning naming its byte offset, and reading
// resynchronises on the next valid frame. A damaged file header does not hide the
// records behind it: when the file holds intact frames, they are recovered by scanning
// for frame markers and the damage is reported (`opsched records repair` writes a clean
// log).
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
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
  bool header_damaged = false;  // records were recovered by scanning for frames
  int64_t intact = 0;   // frames whose checksums hold
  int64_t skipped = 0;  // corrupted stretches skipped (a damaged header is one)
  int64_t unparsable = 0;  // intact frames whose payload is not a Record
  int64_t rejected = 0;    // Records that break the rules of records/validate.h
  std::vector<LogIssue> issues;
};

class LogReader {
 public:
  // Maps the log at `path`. Errors: the file cannot be read; it is not a records log
  // (a bad header and no intact frame); its format version is newer than this build
  // reads. A zero-byte file is an empty log.
  static StatusOr<LogReader> Open(const std::string& path);
  // The same over bytes held in memory (`name` is used in messages).
  static StatusOr<LogReader> FromBytes(std::string name, std::string bytes);
  LogReader(LogReader&& other) noexcept;
  LogReader& operator=(LogReader&& other) = delete;
  ~LogReader();

  uint32_t format_version() const { return version_; }
  // True when the 16-byte file header is damaged and the frames were found by scanning.
  bool header_damaged() const { return header_damaged_; }
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
  // Reads the header: sets version_ and header_damaged_, or says why this is no log.
  Status ReadHeader();
  // Length of the intact frame at `pos` (header included), or 0.
  uint64_t IntactFrameAt(uint64_t pos) const;
  // The first position at or after `from` where an intact frame starts, or size_.
  uint64_t NextIntactFrame(uint64_t from) const;

  std::string path_;
  const char* data_ = nullptr;
  uint64_t size_ = 0;
  bool mapped_ = false;                 // data_ is an mmap of the file
  std::unique_ptr<std::string> owned_;  // data_ points here for FromBytes
  uint32_t version_ = 0;
  bool header_damaged_ = false;
};

// The error for appending to (or importing into) a log whose header is damaged.
Status DamagedHeaderError(const std::string& path);

// Reads every intact record of the log at `path` that ValidateRecord accepts; the
// others are counted in `scan` and logged with their byte offset and reason.
Status ReadRecords(const std::string& path,
                   const std::function<void(const Record& record, uint64_t offset)>& visit,
                   LogScan* scan = nullptr);

}  // namespace opsched::records
