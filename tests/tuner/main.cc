// The tuner tests' main: the test binary is also the measurement worker.
#include <gtest/gtest.h>

#include "tuner/worker.h"

int main(int argc, char** argv) {
  int worker_exit = 0;
  if (opsched::MaybeRunWorker(argc, argv, &worker_exit)) return worker_exit;
  ::testing::InitGoogleTest(&argc, argv);
  return RUN_ALL_TESTS();
}
