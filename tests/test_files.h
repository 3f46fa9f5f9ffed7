// Test helpers for files: paths in the test's temporary directory, whole-file reads and
// writes, and running a function in a child process with a file size limit (a full
// disk, as far as the child's writes can tell).
#pragma once

#include <signal.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <sstream>
#include <string>
#include <vector>

namespace opsched::testing {

// The test's temporary directory.
inline std::string TempDir() {
  const char* dir = std::getenv("TEST_TMPDIR");
  return dir ? dir : "/tmp";
}

// `name` in the test's temporary directory, removed first.
inline std::string TempPath(const std::string& name) {
  std::string path = TempDir() + "/" + name;
  std::remove(path.c_str());
  return path;
}

inline std::string ReadBytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

inline void WriteBytes(const std::string& path, const std::string& bytes) {
  std::ofstream(path, std::ios::binary | std::ios::trunc) << bytes;
}

// The names of the files in `dir` that start with `prefix`.
inline std::vector<std::string> FilesStartingWith(const std::string& dir, const std::string& prefix) {
  std::vector<std::string> out;
  for (const auto& entry : std::filesystem::directory_iterator(dir)) {
    const std::string name = entry.path().filename().string();
    if (name.rfind(prefix, 0) == 0) out.push_back(name);
  }
  return out;
}

// Runs `fn` in a child process whose files may not grow beyond `max_file_bytes` (writes
// past it fail with EFBIG, as on a full disk) and returns its result (-1 when the child
// did not exit normally).
inline int RunWithFileSizeLimit(size_t max_file_bytes, const std::function<int()>& fn) {
  std::fflush(nullptr);
  const pid_t pid = fork();
  if (pid == 0) {
    signal(SIGXFSZ, SIG_IGN);
    struct rlimit limit = {max_file_bytes, max_file_bytes};
    if (setrlimit(RLIMIT_FSIZE, &limit) != 0) _exit(100);
    const int code = fn();
    std::fflush(nullptr);
    _exit(code);
  }
  int status = 0;
  if (pid < 0 || waitpid(pid, &status, 0) != pid || !WIFEXITED(status)) return -1;
  return WEXITSTATUS(status);
}

}  // namespace opsched::testing
