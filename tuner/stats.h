// Stats: the summary of timed repetitions that a record keeps.
#pragma once

#include <vector>

namespace opsched {

struct Stats {
  double median_us = 0;
  double min_us = 0;
  double max_us = 0;
  double mean_us = 0;
  double stddev_us = 0;  // sample standard deviation
  int repeats = 0;
  int warmups = 0;
};

// Summarises `samples_us` (microseconds, at least one).
Stats Summarize(std::vector<double> samples_us, int warmups);

}  // namespace opsched
