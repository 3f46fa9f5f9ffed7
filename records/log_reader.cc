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
#include "records/validate.h"

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
    reader.mapped_ = true;
  }
  ::close(fd);
  OPSCHED_RETURN_IF_ERROR(reader.ReadHeader());
  return reader;
}

StatusOr<LogReader> LogReader::FromBytes(std::string name, std::string bytes) {
  LogReader reader;
  reader.path_ = std::move(name);
  reader.owned_ = std::make_unique<std::string>(std::move(bytes));
  reader.data_ = reader.owned_->data();
  reader.size_ = reader.owned_->size();
  OPSCHED_RETURN_IF_ERROR(reader.ReadHeader());
  return reader;
}

Status LogReader::ReadHeader() {
  if (size_ == 0) {
    version_ = kFormatVersion;
    return absl::OkStatus();
  }
  const bool intact = size_ >= kHeaderSize &&
                      std::memcmp(data_, kLogMagic, sizeof kLogMagic) == 0 &&
                      GetU32(data_ + 12) == Crc32(std::string_view(data_, 12));
  if (!intact) {
    // A damaged header (a flipped bit, a torn first write) must not hide the frames
    // behind it; a file without a single intact frame is not a log at all.
    if (NextIntactFrame(0) >= size_) {
      return absl::InvalidArgumentError(
          fmt::format("{} is not an opsched records log (bad header)", path_));
    }
    header_damaged_ = true;
    version_ = kFormatVersion;  // each record still carries its own format version
    return absl::OkStatus();
  }
  version_ = GetU32(data_ + 8);
  if (version_ > kFormatVersion || version_ == 0) {
    return absl::FailedPreconditionError(fmt::format(
        "{} has records format version {}; this build reads versions 1 to {}", path_, version_,
        kFormatVersion));
  }
  return absl::OkStatus();
}

LogReader::LogReader(LogReader&& other) noexcept
    : path_(std::move(other.path_)),
      data_(other.data_),
      size_(other.size_),
      mapped_(other.mapped_),
      owned_(std::move(other.owned_)),
      version_(other.version_),
      header_damaged_(other.header_damaged_) {
  other.data_ = nullptr;
  other.size_ = 0;
  other.mapped_ = false;
}

LogReader::~LogReader() {
  if (mapped_ && data_ != nullptr) munmap(const_cast<char*>(data_), size_);
}

uint64_t LogReader::IntactFrameAt(uint64_t pos) const {
  if (pos > size_ || size_ - pos < kFrameHeaderSize) return 0;
  const char* h = data_ + pos;
  if (GetU32(h) != kFrameMarker) return 0;
  if (GetU32(h + 12) != Crc32(std::string_view(h, 12))) return 0;
  uint32_t length = GetU32(h + 4);
  if (length > kMaxPayloadBytes || length > size_ - pos - kFrameHeaderSize) return 0;
  if (GetU32(h + 8) != Crc32(std::string_view(h + kFrameHeaderSize, length))) return 0;
  return kFrameHeaderSize + length;
}

uint64_t LogReader::NextIntactFrame(uint64_t from) const {
  char marker[4];
  PutU32(marker, kFrameMarker);
  uint64_t next = from;
  while (next < size_) {
    const void* hit = memmem(data_ + next, size_ - next, marker, sizeof marker);
    if (hit == nullptr) return size_;
    next = static_cast<uint64_t>(static_cast<const char*>(hit) - data_);
    if (IntactFrameAt(next) > 0) return next;
    ++next;
  }
  return size_;
}

void LogReader::ForEachFrame(
    const std::function<void(uint64_t offset, std::string_view payload)>& visit,
    LogScan* scan) const {
  LogScan local;
  LogScan& s = scan ? *scan : local;
  s.format_version = version_;
  s.header_damaged = header_damaged_;
  uint64_t pos = size_ == 0 ? 0 : kHeaderSize;
  if (header_damaged_) {
    // Everything before the first intact frame is the damaged header (and whatever
    // else was hit): one issue, then the usual frame-by-frame reading.
    const uint64_t first = NextIntactFrame(0);
    LogIssue issue{0, first,
                   "damaged file header; records recovered by scanning for frames "
                   "(opsched records repair writes a clean log)"};
    Log().warn("{}: {} ({} bytes at byte offset 0 skipped)", path_, issue.what, issue.length);
    s.issues.push_back(std::move(issue));
    ++s.skipped;
    pos = first;
  }
  while (pos < size_) {
    uint64_t frame = IntactFrameAt(pos);
    if (frame > 0) {
      visit(pos, std::string_view(data_ + pos + kFrameHeaderSize, frame - kFrameHeaderSize));
      ++s.intact;
      pos += frame;
      continue;
    }
    // Corrupted or torn: find the next marker that starts an intact frame.
    const uint64_t next = NextIntactFrame(pos + 1);
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
  const uint64_t frame = offset < size_ ? IntactFrameAt(offset) : 0;
  if (frame == 0) {
    return absl::DataLossError(
        fmt::format("{}: no intact frame at byte offset {}", path_, offset));
  }
  return std::string_view(data_ + offset + kFrameHeaderSize, frame - kFrameHeaderSize);
}

void LogReader::ReleasePages() const {
  if (mapped_ && data_ != nullptr) madvise(const_cast<char*>(data_), size_, MADV_DONTNEED);
}

Status DamagedHeaderError(const std::string& path) {
  return absl::FailedPreconditionError(fmt::format(
      "{} has a damaged file header (its intact records are still read); refusing to append "
      "until `opsched records repair {} -o {}` has written a clean log",
      path, path, path));
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
        Status valid = ParseValidRecord(payload, &record);
        if (!valid.ok()) {
          ++(absl::IsDataLoss(valid) ? s.unparsable : s.rejected);
          Log().warn("{}: record at byte offset {} skipped: {}", path, offset, valid.message());
          return;
        }
        visit(record, offset);
      },
      &s);
  return absl::OkStatus();
}

}  // namespace opsched::records
