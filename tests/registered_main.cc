// The tests' main where a test reads Registry::Global(): registers every built-in op
// (RegisterAll()) before the tests run.
#include <gtest/gtest.h>

#include <cstdio>
#include <string>

#include "strategies/register_all.h"

int main(int argc, char** argv) {
  if (opsched::Status registered = opsched::RegisterAll(); !registered.ok()) {
    std::fprintf(stderr, "registering the built-in ops: %s\n", std::string(registered.message()).c_str());
    return 1;
  }
  ::testing::InitGoogleTest(&argc, argv);
  return RUN_ALL_TESTS();
}
