#include "opsched/untuned_recorder.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "core/format.h"
#include "records/log_lock.h"

namespace opsched {
namespace {

constexpr int kFlags = O_RDWR | O_CREAT | O_APPEND;
// A suite of every workload a program used is kilobytes; a file far larger is not one.
constexpr off_t kMaxBytes = off_t{64} << 20;
constexpr std::string_view kHeader =
    "# Workloads served without an exact record (OPSCHED_RECORD_UNTUNED), one per line.\n"
    "# Tune them with: opsched tune --suite THIS_FILE\n";

Status Errno(std::string_view what, const std::string& path) {
  return absl::InvalidArgumentError(
      fmt::format("record-untuned file {}: {}: {}", path, what, std::strerror(errno)));
}

// The workload of a suite line: comment and surrounding blanks removed.
std::string_view WorkloadText(std::string_view line) {
  line = line.substr(0, line.find('#'));
  while (!line.empty() && (line.back() == ' ' || line.back() == '\t' || line.back() == '\r')) line.remove_suffix(1);
  while (!line.empty() && (line.front() == ' ' || line.front() == '\t')) line.remove_prefix(1);
  return line;
}

Status WriteAll(int fd, std::string_view bytes, const std::string& path) {
  while (!bytes.empty()) {
    const ssize_t n = ::write(fd, bytes.data(), bytes.size());
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return Errno("writing", path);
    bytes.remove_prefix(static_cast<size_t>(n));
  }
  return absl::OkStatus();
}

// Releases the flock() of `fd` when it goes out of scope.
struct Unlock {
  int fd;
  ~Unlock() { records::UnlockFile(fd); }
};

}  // namespace

StatusOr<std::unique_ptr<UntunedRecorder>> UntunedRecorder::Open(std::string path) {
  if (path.empty()) return absl::InvalidArgumentError("record-untuned file: empty path");
  std::unique_ptr<UntunedRecorder> recorder(new UntunedRecorder(std::move(path)));
  std::lock_guard<std::mutex> lock(recorder->mu_);
  Status caught = recorder->CatchUp();
  records::UnlockFile(recorder->fd_);
  OPSCHED_RETURN_IF_ERROR(caught);
  return recorder;
}

UntunedRecorder::~UntunedRecorder() {
  if (fd_ >= 0) ::close(fd_);
}

Status UntunedRecorder::CatchUp() {
  StatusOr<int> fd = records::LockCurrentFile(path_, fd_, kFlags);
  if (!fd.ok()) {
    fd_ = -1;
    return absl::InvalidArgumentError(fmt::format("record-untuned file: {}", fd.status().message()));
  }
  fd_ = *fd;
  struct stat st;
  if (::fstat(fd_, &st) != 0) return Errno("stat", path_);
  if (!S_ISREG(st.st_mode)) return absl::InvalidArgumentError(fmt::format("record-untuned file {}: not a regular file", path_));
  if (st.st_dev != device_ || st.st_ino != inode_ || st.st_size < known_size_) {
    // Another file now (or truncated by hand): read it from the start.
    device_ = st.st_dev;
    inode_ = st.st_ino;
    known_size_ = 0;
    seen_.clear();
  }
  if (st.st_size - known_size_ > kMaxBytes) {
    return absl::InvalidArgumentError(fmt::format(
        "record-untuned file {}: {} bytes, more than a suite of workload lines ({} at most)", path_, st.st_size,
        kMaxBytes));
  }
  std::string tail(static_cast<size_t>(st.st_size - known_size_), '\0');
  size_t got = 0;
  while (got < tail.size()) {
    const ssize_t n = ::pread(fd_, tail.data() + got, tail.size() - got, known_size_ + static_cast<off_t>(got));
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return Errno("reading", path_);
    if (n == 0) break;
    got += static_cast<size_t>(n);
  }
  tail.resize(got);
  if (!tail.empty() && tail.back() != '\n') {
    // A last line without its newline: written by hand, or torn by a crash mid-write.
    // It is ended, not removed (nothing is lost; a torn line is a bad suite line that
    // `opsched tune` reports by its number), so the next line does not run into it.
    OPSCHED_RETURN_IF_ERROR(WriteAll(fd_, "\n", path_));
    tail += '\n';
  }
  for (size_t start = 0; start < tail.size();) {
    const size_t end = tail.find('\n', start);
    std::string_view text = WorkloadText(std::string_view(tail).substr(start, end - start));
    if (!text.empty()) seen_.emplace(text);
    start = end + 1;
  }
  known_size_ += static_cast<off_t>(tail.size());
  if (known_size_ == 0) {
    OPSCHED_RETURN_IF_ERROR(WriteAll(fd_, kHeader, path_));
    known_size_ = static_cast<off_t>(kHeader.size());
  }
  return absl::OkStatus();
}

StatusOr<bool> UntunedRecorder::Note(std::string_view line) {
  line = WorkloadText(line);
  if (line.empty() || line.find('\n') != std::string_view::npos) {
    return absl::InvalidArgumentError("record-untuned file: a workload is one non-empty line");
  }
  // Called on decision-cache misses only, so the file is checked every time: a file
  // moved away (to be tuned) and begun afresh gets the lines again.
  std::lock_guard<std::mutex> lock(mu_);
  Status caught = CatchUp();
  Unlock unlock{fd_};
  OPSCHED_RETURN_IF_ERROR(caught);
  if (seen_.count(line) > 0) return false;  // this or another process wrote it before
  const std::string bytes = fmt::format("{}\n", line);
  OPSCHED_RETURN_IF_ERROR(WriteAll(fd_, bytes, path_));
  if (::fdatasync(fd_) != 0) return Errno("syncing", path_);
  known_size_ += static_cast<off_t>(bytes.size());
  seen_.emplace(line);
  return true;
}

}  // namespace opsched
