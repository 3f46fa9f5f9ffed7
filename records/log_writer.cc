#include "records/log_writer.h"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "core/format.h"

#include "records/log_format.h"

namespace opsched::records {
namespace {

Status Errno(std::string_view what, const std::string& path) {
  return absl::InternalError(fmt::format("{} {}: {}", what, path, std::strerror(errno)));
}

// Holds an exclusive flock for its lifetime.
class FileLock {
 public:
  explicit FileLock(int fd) : fd_(fd) {
    while (flock(fd_, LOCK_EX) != 0 && errno == EINTR) {
    }
  }
  ~FileLock() { flock(fd_, LOCK_UN); }

 private:
  int fd_;
};

Status WriteAll(int fd, std::string_view bytes, const std::string& path) {
  // One write() call carries the whole frame; the loop only continues after a signal
  // or a short write (which only a full disk produces on regular files).
  while (!bytes.empty()) {
    ssize_t n = ::write(fd, bytes.data(), bytes.size());
    if (n < 0) {
      if (errno == EINTR) continue;
      return Errno("writing", path);
    }
    bytes.remove_prefix(static_cast<size_t>(n));
  }
  return absl::OkStatus();
}

}  // namespace

StatusOr<std::unique_ptr<LogWriter>> LogWriter::Open(const std::string& path) {
  int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
  if (fd < 0) return Errno("opening", path);
  std::unique_ptr<LogWriter> writer(new LogWriter(path, fd));
  FileLock lock(fd);
  OPSCHED_RETURN_IF_ERROR(writer->EnsureHeaderLocked());
  return writer;
}

LogWriter::~LogWriter() {
  if (fd_ >= 0) ::close(fd_);
}

Status LogWriter::EnsureHeaderLocked() {
  struct stat st;
  if (fstat(fd_, &st) != 0) return Errno("stat", path_);
  if (st.st_size == 0) return WriteAll(fd_, EncodeHeader(), path_);
  // Check the existing header through a separate read-only descriptor.
  int rfd = ::open(path_.c_str(), O_RDONLY | O_CLOEXEC);
  if (rfd < 0) return Errno("opening", path_);
  char header[kHeaderSize];
  ssize_t n = ::pread(rfd, header, kHeaderSize, 0);
  ::close(rfd);
  if (n != static_cast<ssize_t>(kHeaderSize) ||
      std::memcmp(header, kLogMagic, sizeof kLogMagic) != 0 ||
      GetU32(header + 12) != Crc32(std::string_view(header, 12))) {
    return absl::FailedPreconditionError(
        fmt::format("{} is not an opsched records log; refusing to append to it", path_));
  }
  uint32_t version = GetU32(header + 8);
  if (version > kFormatVersion) {
    return absl::FailedPreconditionError(fmt::format(
        "{} has records format version {}, newer than this build's {}; refusing to append",
        path_, version, kFormatVersion));
  }
  return absl::OkStatus();
}

Status LogWriter::Append(const Record& record) {
  std::string payload;
  if (record.format_version() == kFormatVersion) {
    record.SerializeToString(&payload);
  } else {
    Record copy = record;
    copy.set_format_version(kFormatVersion);
    copy.SerializeToString(&payload);
  }
  return AppendPayload(payload);
}

Status LogWriter::AppendPayload(std::string_view payload) {
  return AppendPayloads({std::string(payload)});
}

Status LogWriter::AppendPayloads(const std::vector<std::string>& payloads) {
  std::string frame;
  for (const std::string& payload : payloads) {
    if (payload.size() > kMaxPayloadBytes) {
      return absl::InvalidArgumentError(
          fmt::format("record of {} bytes exceeds the {} byte limit", payload.size(),
                      kMaxPayloadBytes));
    }
    frame += EncodeFrame(payload);
  }
  if (frame.empty()) return absl::OkStatus();
  FileLock lock(fd_);
  // The file may have been truncated since Open; an empty file gets its header first.
  struct stat st;
  if (fstat(fd_, &st) != 0) return Errno("stat", path_);
  if (st.st_size == 0) frame.insert(0, EncodeHeader());
  return WriteAll(fd_, frame, path_);
}

Status LogWriter::Sync() {
  if (::fsync(fd_) != 0) return Errno("fsync", path_);
  return absl::OkStatus();
}

}  // namespace opsched::records
