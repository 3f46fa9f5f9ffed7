// Stats: the summary of timed repetitions that a record keeps.
#pragma once

#include <string>
#include <vector>

#include "records/records.pb.h"

namespace opsched {

struct Stats {
  double median_us = 0;
  double min_us = 0;
  double max_us = 0;
  double mean_us = 0;
  double stddev_us = 0;  // sample standard deviation
  int repeats = 0;
  int warmups = 0;
  double host_us = 0;  // median host time per call (StatsProto.host_us); 0: not measured
  std::string l2_flush;  // StatsProto.l2_flush: "read", "overwrite", "none"; empty on a CPU
};

// Summarises `samples_us` (microseconds, at least one).
Stats Summarize(std::vector<double> samples_us, int warmups);

// The median of `samples_us` (0 when empty).
double Median(std::vector<double> samples_us);

records::StatsProto ToProto(const Stats& s);
Stats FromProto(const records::StatsProto& s);

}  // namespace opsched
