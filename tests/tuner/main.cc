// The tuner tests' main: the test binary is also the measurement worker, and both serve
// the test op "bump" (test_impls.h).
#include <gtest/gtest.h>

#include <cstdio>
#include <string>

#include "tests/tuner/test_impls.h"
#include "tuner/worker.h"

int main(int argc, char** argv) {
  if (opsched::Status registered = opsched::testing::RegisterBumpOps(opsched::Registry::Global()); !registered.ok()) {
    std::fprintf(stderr, "registering bump: %s\n", std::string(registered.message()).c_str());
    return 1;
  }
  int worker_exit = 0;
  if (opsched::MaybeRunWorker(argc, argv, &worker_exit)) return worker_exit;
  ::testing::InitGoogleTest(&argc, argv);
  return RUN_ALL_TESTS();
}
