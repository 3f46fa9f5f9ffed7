#include "records/log_reader.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "core/format.h"

#include "core/log.h"
#include "records/log_format.h"

namespace opsched::records {

StatusOr<LogReader> LogReader::Open(const std::string& path) {
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    return absl::NotFoundError(fmt::format("opening {}: {}", path, std::strerror(errno)));
  }
  struct stat st;
  if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    ::close(fd);
    return absl::InvalidArgumentError(fmt::format("{} is not a regular file", path));
  }
  LogReader reader;
  reader.path_ = path;
  reader.size_ = static_cast<uint64_t>(st.st_size);
  if (reader.size_ > 0) {
    void* map = mmap(nullptr, reader.size_, PROT_READ, MAP_PRIVATE, fd, 0);
    if (map == MAP_FAILED) {
      ::close(fd);
      return absl::InternalError(fmt::format("mapping {}: {}", path, std::strerror(errno)));
    }
    madvise(map, reader.size_, MADV_SEQUENTIAL);
    reader.data_ = static_cast<const char*>(map);
  }
  ::close(fd);
  if (reader.size_ == 0) {
    reader.version_ = kFormatVersion;
    return reader;
  }
  if (reader.size_ < kHeaderSize ||
      std::memcmp(reader.data_, kLogMagic, sizeof kLogMagic) != 0 ||
      GetU32(reader.data_ + 12) != Crc32(std::string_view(reader.data_, 12))) {
    return absl::InvalidArgumentError(
        fmt::format("{} is not an opsched records log (bad header)", path));
  }
  reader.version_ = GetU32(reader.data_ + 8);
  if (reader.version_ > kFormatVersion || reader.version_ == 0) {
    return absl::FailedPreconditionError(fmt::format(
        "{} has records format version {}; this build reads versions 1 to {}", path,
        reader.version_, kFormatVersion));
  }
  return reader;
}

LogReader::LogReader(LogReader&& other) noexcept
    : path_(std::move(other.path_)),
      data_(other.data_),
      size_(other.size_),
      version_(other.version_) {
  other.data_ = nullptr;
  other.size_ = 0;
}

LogReader::~LogReader() {
  if (data_ != nullptr) munmap(const_cast<char*>(data_), size_);
}

uint64_t LogReader::IntactFrameAt(uint64_t pos) const {
  if (size_ - pos < kFrameHeaderSize) return 0;
  const char* h = data_ + pos;
  if (GetU32(h) != kFrameMarker) return 0;
  if (GetU32(h + 12) != Crc32(std::string_view(h, 12))) return 0;
  uint32_t length = GetU32(h + 4);
  if (length > kMaxPayloadBytes || length > size_ - pos - kFrameHeaderSize) return 0;
  if (GetU32(h + 8) != Crc32(std::string_view(h + kFrameHeaderSize, length))) return 0;
  return kFrameHeaderSize + length;
}

void LogReader::ForEachFrame(
    const std::function<void(uint64_t offset, std::string_view payload)>& visit,
    LogScan* scan) const {
  LogScan local;
  LogScan& s = scan ? *scan : local;
  s.format_version = version_;
  uint64_t pos = size_ == 0 ? 0 : kHeaderSize;
  while (pos < size_) {
    uint64_t frame = IntactFrameAt(pos);
    if (frame > 0) {
      visit(pos, std::string_view(data_ + pos + kFrameHeaderSize, frame - kFrameHeaderSize));
      ++s.intact;
      pos += frame;
      continue;
    }
    // Corrupted or torn: find the next marker that starts an intact frame.
    uint64_t next = pos + 1;
    char marker[4];
    PutU32(marker, kFrameMarker);
    while (next < size_) {
      const void* hit = memmem(data_ + next, size_ - next, marker, sizeof marker);
      if (hit == nullptr) {
        next = size_;
        break;
      }
      next = static_cast<uint64_t>(static_cast<const char*>(hit) - data_);
      if (IntactFrameAt(next) > 0) break;
      ++next;
    }
    const bool at_end = next >= size_;
    LogIssue issue{pos, next - pos,
                   at_end ? "torn or corrupted frame at the end of the file"
                          : "corrupted frame (checksum or length mismatch)"};
    Log().warn("{}: skipped {} bytes at byte offset {}: {}", path_, issue.length, issue.offset,
               issue.what);
    s.issues.push_back(std::move(issue));
    ++s.skipped;
    pos = next;
  }
}

StatusOr<std::string_view> LogReader::FrameAt(uint64_t offset) const {
  if (offset >= size_ || IntactFrameAt(offset) == 0) {
    return absl::DataLossError(
        fmt::format("{}: no intact frame at byte offset {}", path_, offset));
  }
  uint64_t frame = IntactFrameAt(offset);
  return std::string_view(data_ + offset + kFrameHeaderSize, frame - kFrameHeaderSize);
}

void LogReader::ReleasePages() const {
  if (data_ != nullptr) madvise(const_cast<char*>(data_), size_, MADV_DONTNEED);
}

Status ReadRecords(const std::string& path,
                   const std::function<void(const Record& record, uint64_t offset)>& visit,
                   LogScan* scan) {
  OPSCHED_ASSIGN_OR_RETURN(LogReader reader, LogReader::Open(path));
  LogScan local;
  LogScan& s = scan ? *scan : local;
  Record record;
  reader.ForEachFrame(
      [&](uint64_t offset, std::string_view payload) {
        if (!record.ParseFromArray(payload.data(), static_cast<int>(payload.size()))) {
          ++s.unparsable;
          Log().warn("{}: frame at byte offset {} is not a record; skipped", path, offset);
          return;
        }
        visit(record, offset);
      },
      &s);
  return absl::OkStatus();
}

}  // namespace opsched::records
