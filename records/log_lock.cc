#include "records/log_lock.h"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "core/format.h"

namespace opsched::records {
namespace {

Status Errno(std::string_view what, const std::string& path) {
  return absl::InternalError(fmt::format("{} {}: {}", what, path, std::strerror(errno)));
}

}  // namespace

StatusOr<int> LockCurrentFile(const std::string& path, int fd, int flags) {
  while (true) {
    if (fd < 0) {
      fd = ::open(path.c_str(), flags | O_CLOEXEC, 0644);
      if (fd < 0) return Errno("opening", path);
    }
    int locked;
    while ((locked = flock(fd, LOCK_EX)) != 0 && errno == EINTR) {
    }
    if (locked != 0) {
      Status error = Errno("locking", path);
      ::close(fd);
      return error;
    }
    struct stat held, named;
    if (fstat(fd, &held) != 0) {
      Status error = Errno("stat", path);
      ::close(fd);
      return error;
    }
    if (::stat(path.c_str(), &named) == 0 && named.st_dev == held.st_dev &&
        named.st_ino == held.st_ino) {
      return fd;
    }
    // Replaced or removed while we waited: the file we hold is no longer the log.
    ::close(fd);
    fd = -1;
  }
}

void UnlockFile(int fd) {
  if (fd >= 0) flock(fd, LOCK_UN);
}

StatusOr<LogLock> LogLock::Acquire(const std::string& path) {
  // Created here only when missing (O_EXCL tells whether this call created it).
  bool created = false;
  int fd = ::open(path.c_str(), O_RDONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
  if (fd >= 0) {
    created = true;
  } else if (errno != EEXIST) {
    return Errno("creating", path);
  }
  OPSCHED_ASSIGN_OR_RETURN(fd, LockCurrentFile(path, fd, O_RDONLY | O_CREAT));
  return LogLock(path, fd, created);
}

LogLock::LogLock(LogLock&& other) noexcept
    : path_(std::move(other.path_)), fd_(other.fd_), created_(other.created_) {
  other.fd_ = -1;
}

LogLock::~LogLock() {
  if (fd_ >= 0) {
    UnlockFile(fd_);
    ::close(fd_);
  }
}

void LogLock::Abandon() {
  struct stat st;
  if (created_ && fd_ >= 0 && fstat(fd_, &st) == 0 && st.st_size == 0) ::unlink(path_.c_str());
}

}  // namespace opsched::records
