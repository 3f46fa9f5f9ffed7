#include "records/log_writer.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "core/format.h"
#include "records/log_format.h"
#include "records/log_lock.h"
#include "records/log_reader.h"

namespace opsched::records {
namespace {

constexpr int kAppendFlags = O_WRONLY | O_CREAT | O_APPEND;

Status Errno(std::string_view what, const std::string& path) {
  return absl::InternalError(fmt::format("{} {}: {}", what, path, std::strerror(errno)));
}

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

// Releases the append lock at the end of a scope.
class Unlock {
 public:
  explicit Unlock(int fd) : fd_(fd) {}
  ~Unlock() { UnlockFile(fd_); }

 private:
  int fd_;
};

}  // namespace

StatusOr<std::unique_ptr<LogWriter>> LogWriter::Open(const std::string& path) {
  std::unique_ptr<LogWriter> writer(new LogWriter(path));
  OPSCHED_RETURN_IF_ERROR(writer->LockCurrent());
  Unlock unlock(writer->fd_);
  // A missing or empty file becomes a log now.
  struct stat st;
  if (fstat(writer->fd_, &st) != 0) return Errno("stat", path);
  if (st.st_size == 0) OPSCHED_RETURN_IF_ERROR(WriteAll(writer->fd_, EncodeHeader(), path));
  return writer;
}

LogWriter::~LogWriter() {
  if (fd_ >= 0) ::close(fd_);
}

Status LogWriter::LockCurrent() {
  StatusOr<int> locked = LockCurrentFile(path_, fd_, kAppendFlags);
  if (!locked.ok()) {
    fd_ = -1;
    return locked.status();
  }
  fd_ = *locked;
  // A new file (descriptor numbers are reused, so compare the files) is checked first.
  struct stat st;
  if (fstat(fd_, &st) != 0) {
    Status error = Errno("stat", path_);
    UnlockFile(fd_);
    return error;
  }
  if (checked_ && st.st_dev == checked_dev_ && st.st_ino == checked_ino_) {
    return absl::OkStatus();
  }
  Status header = CheckHeaderLocked();
  if (!header.ok()) {
    UnlockFile(fd_);
    return header;
  }
  checked_ = true;
  checked_dev_ = st.st_dev;
  checked_ino_ = st.st_ino;
  return absl::OkStatus();
}

Status LogWriter::CheckHeaderLocked() {
  struct stat st;
  if (fstat(fd_, &st) != 0) return Errno("stat", path_);
  if (st.st_size == 0) return absl::OkStatus();  // gets its header with the next write
  // Check the existing header through a separate read-only descriptor.
  int rfd = ::open(path_.c_str(), O_RDONLY | O_CLOEXEC);
  if (rfd < 0) return Errno("opening", path_);
  char header[kHeaderSize];
  ssize_t n = ::pread(rfd, header, kHeaderSize, 0);
  ::close(rfd);
  if (n != static_cast<ssize_t>(kHeaderSize) ||
      std::memcmp(header, kLogMagic, sizeof kLogMagic) != 0 ||
      GetU32(header + 12) != Crc32(std::string_view(header, 12))) {
    StatusOr<LogReader> damaged = LogReader::Open(path_);
    if (damaged.ok() && damaged->header_damaged()) return DamagedHeaderError(path_);
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
  OPSCHED_RETURN_IF_ERROR(LockCurrent());
  Unlock unlock(fd_);
  // The file may have been truncated since Open; an empty file gets its header first.
  struct stat st;
  if (fstat(fd_, &st) != 0) return Errno("stat", path_);
  if (st.st_size == 0) frame.insert(0, EncodeHeader());
  return WriteAll(fd_, frame, path_);
}

Status LogWriter::Sync() {
  if (fd_ >= 0 && ::fsync(fd_) != 0) return Errno("fsync", path_);
  return absl::OkStatus();
}

}  // namespace opsched::records
