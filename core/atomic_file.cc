#include "core/atomic_file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "core/format.h"

namespace opsched {
namespace {

Status Errno(std::string_view what, const std::string& path) {
  const int error = errno;
  const std::string message = fmt::format("{} {}: {}", what, path, std::strerror(error));
  return error == ENOSPC || error == EDQUOT || error == EFBIG
             ? absl::ResourceExhaustedError(message)
             : absl::InternalError(message);
}

Status WriteAll(int fd, std::string_view bytes, const std::string& path) {
  while (!bytes.empty()) {
    const ssize_t n = ::write(fd, bytes.data(), bytes.size());
    if (n < 0) {
      if (errno == EINTR) continue;
      return Errno("writing", path);
    }
    bytes.remove_prefix(static_cast<size_t>(n));
  }
  return absl::OkStatus();
}

std::string DirectoryOf(const std::string& path) {
  const size_t slash = path.rfind('/');
  if (slash == std::string::npos) return ".";
  return slash == 0 ? "/" : path.substr(0, slash);
}

}  // namespace

std::string TemporaryPathFor(const std::string& path) {
  return fmt::format("{}.tmp.{}", path, getpid());
}

Status WriteFileAtomically(const std::string& path, std::string_view bytes) {
  const std::string tmp = TemporaryPathFor(path);
  mode_t mode = 0644;
  struct stat old;
  const bool replacing = ::stat(path.c_str(), &old) == 0;
  if (replacing) {
    if (S_ISDIR(old.st_mode)) {
      return absl::InvalidArgumentError(fmt::format("{} is a directory", path));
    }
    mode = old.st_mode & 07777;
  }
  const int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) return Errno("creating", tmp);
  Status s = WriteAll(fd, bytes, tmp);
  if (s.ok() && replacing && ::fchmod(fd, mode) != 0) s = Errno("setting the mode of", tmp);
  if (s.ok() && ::fsync(fd) != 0) s = Errno("flushing", tmp);
  if (::close(fd) != 0 && s.ok()) s = Errno("closing", tmp);
  if (s.ok() && ::rename(tmp.c_str(), path.c_str()) != 0) {
    s = Errno(fmt::format("renaming {} to", tmp), path);
  }
  if (!s.ok()) {
    ::unlink(tmp.c_str());
    return s;
  }
  // The rename itself reaches the disk with the directory.
  const int dir = ::open(DirectoryOf(path).c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dir >= 0) {
    ::fsync(dir);
    ::close(dir);
  }
  return absl::OkStatus();
}

}  // namespace opsched
