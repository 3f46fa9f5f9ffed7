// No exception escapes a command: RunGuarded turns it into a message and exit status 2.
#include "tools/guarded_main.h"

#include <new>
#include <stdexcept>
#include <string>

#include <gtest/gtest.h>

namespace opsched::tools {
namespace {

std::pair<int, std::string> Guarded(const std::function<int()>& body) {
  ::testing::internal::CaptureStderr();
  const int code = RunGuarded(body);
  return {code, ::testing::internal::GetCapturedStderr()};
}

TEST(GuardedMainTest, ABodyThatReturnsKeepsItsExitStatusAndPrintsNothing) {
  for (int code : {0, 1, 2, 3}) {
    auto [exit, err] = Guarded([code] { return code; });
    EXPECT_EQ(exit, code);
    EXPECT_EQ(err, "");
  }
}

TEST(GuardedMainTest, OutOfMemoryIsReportedWithExitStatus2) {
  // Thrown by hand: a real allocation failure aborts under the sanitizers CI runs.
  auto [exit, err] = Guarded([]() -> int { throw std::bad_alloc(); });
  EXPECT_EQ(exit, 2);
  EXPECT_EQ(err, "opsched: out of memory\n");
}

TEST(GuardedMainTest, AnyOtherExceptionIsAnInternalErrorWithItsMessage) {
  auto [exit, err] = Guarded([]() -> int { throw std::runtime_error("the disk caught fire"); });
  EXPECT_EQ(exit, 2);
  EXPECT_EQ(err, "opsched: internal error: the disk caught fire\n");
  auto [exit2, err2] = Guarded([]() -> int { throw 42; });
  EXPECT_EQ(exit2, 2);
  EXPECT_EQ(err2, "opsched: internal error: an unknown exception\n");
}

}  // namespace
}  // namespace opsched::tools
