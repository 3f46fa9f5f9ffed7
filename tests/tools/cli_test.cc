// The opsched command line as a new user meets it: hostile arguments and inputs give a
// clear error and a meaningful exit status, never a crash or a silently wrong answer.
#include <sys/wait.h>

#include <cstdio>
#include <cstdlib>
#include <string>

#include <gtest/gtest.h>

#include "core/format.h"
#include "tests/test_files.h"

namespace opsched {
namespace {

using ::opsched::testing::ReadBytes;
using ::opsched::testing::TempPath;
using ::opsched::testing::WriteBytes;

struct Result {
  int code = -1;  // the exit status; 128 + N when killed by signal N
  std::string out;
  std::string err;
};

// Runs `opsched ARGS` (ARGS as the shell reads them).
Result Opsched(const std::string& args) {
  const char* root = std::getenv("TEST_SRCDIR");
  const std::string binary = std::string(root ? root : ".") + "/opsched/tools/opsched";
  const std::string out = TempPath("cli_stdout.txt");
  const std::string err = TempPath("cli_stderr.txt");
  const int status = std::system(fmt::format("{} {} >{} 2>{}", binary, args, out, err).c_str());
  Result r;
  if (WIFEXITED(status)) r.code = WEXITSTATUS(status);
  if (WIFSIGNALED(status)) r.code = 128 + WTERMSIG(status);
  r.out = ReadBytes(out);
  r.err = ReadBytes(err);
  return r;
}

std::string Suite(const std::string& name, const std::string& text) {
  const std::string path = TempPath(name);
  WriteBytes(path, text);
  return path;
}

TEST(CliTest, TuneRefusesTimeoutsNoCandidateCouldMeet) {
  const std::string suite = Suite("t.txt", "reduce x=f32[16,16] axes=1 op=sum\n");
  const std::string log = TempPath("t.log");
  for (const char* timeout : {"0.001", "-1", "0", "nan", "inf", "1e300", "soon"}) {
    Result r = Opsched(fmt::format("tune --suite {} --records {} --target cpu --timeout {} --no-progress",
                                   suite, log, timeout));
    EXPECT_EQ(r.code, 2) << timeout << ": " << r.err;
    EXPECT_NE(r.err.find("--timeout"), std::string::npos) << timeout << ": " << r.err;
    EXPECT_FALSE(std::ifstream(log).good()) << timeout << ": nothing may be logged";
  }
  Result shorter = Opsched(fmt::format("tune --suite {} --records {} --target cpu --timeout 2 --min-time-ms 5000 "
                                       "--no-progress",
                                       suite, log));
  EXPECT_EQ(shorter.code, 2) << shorter.err;
  EXPECT_NE(shorter.err.find("every candidate would time out"), std::string::npos) << shorter.err;
}

}  // namespace
}  // namespace opsched
