// What a fuzz target asserts: a property that must hold for every input. A violation
// prints what broke and aborts, which libFuzzer (and the corpus test) report as a
// finding.
#pragma once

#include <google/protobuf/stubs/logging.h>

#include <cstdio>
#include <cstdlib>

#include "core/log.h"

#define FUZZ_CHECK(condition, what)                                                      \
  do {                                                                                   \
    if (!(condition)) {                                                                  \
      std::fprintf(stderr, "fuzz check failed at %s:%d: %s: %s\n", __FILE__, __LINE__, \
                   #condition, what);                                                    \
      std::abort();                                                                      \
    }                                                                                    \
  } while (0)

// Called once before the first input (LLVMFuzzerInitialize): the warnings opsched and
// protobuf print about bad input are expected by the thousand; they are silenced unless
// OPSCHED_LOG_LEVEL asks for them. The logger is created here, outside any input.
inline void QuietLogs() {
  if (std::getenv("OPSCHED_LOG_LEVEL") == nullptr) {
    setenv("OPSCHED_LOG_LEVEL", "off", 0);
    google::protobuf::SetLogHandler(nullptr);
  }
  (void)opsched::Log();
}

#define FUZZ_INITIALIZE_QUIETLY()                                   \
  extern "C" int LLVMFuzzerInitialize(int*, char***) {               \
    QuietLogs();                                                     \
    return 0;                                                        \
  }
