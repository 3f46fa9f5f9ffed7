// The logger: one object for the process, reachable from a static (a fuzzing finding:
// it used to leak the shared_ptr that owned it, which leak checkers report).
#include "core/log.h"

#include <gtest/gtest.h>

#if defined(__SANITIZE_ADDRESS__)
#include <sanitizer/lsan_interface.h>
#endif

namespace opsched {
namespace {

TEST(LogTest, TheLoggerIsOneObjectThatLeakCheckersDoNotReport) {
  spdlog::logger& first = Log();
  EXPECT_EQ(&first, &Log());
  EXPECT_EQ(first.name(), "opsched");
#if defined(__SANITIZE_ADDRESS__)
  EXPECT_EQ(__lsan_do_recoverable_leak_check(), 0);
#endif
}

}  // namespace
}  // namespace opsched
