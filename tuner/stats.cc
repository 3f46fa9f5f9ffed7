#include "tuner/stats.h"

#include <algorithm>
#include <cmath>
#include <numeric>

namespace opsched {

namespace {

// The median of sorted samples.
double SortedMedian(const std::vector<double>& sorted) {
  const size_t n = sorted.size();
  if (n == 0) return 0;
  return n % 2 ? sorted[n / 2] : 0.5 * (sorted[n / 2 - 1] + sorted[n / 2]);
}

}  // namespace

double Median(std::vector<double> samples) {
  std::sort(samples.begin(), samples.end());
  return SortedMedian(samples);
}

Stats Summarize(std::vector<double> samples, int warmups) {
  Stats s;
  s.warmups = warmups;
  s.repeats = static_cast<int>(samples.size());
  if (samples.empty()) return s;
  std::sort(samples.begin(), samples.end());
  const size_t n = samples.size();
  s.median_us = SortedMedian(samples);
  s.min_us = samples.front();
  s.max_us = samples.back();
  s.mean_us = std::accumulate(samples.begin(), samples.end(), 0.0) / n;
  if (n > 1) {
    double ss = 0;
    for (double x : samples) ss += (x - s.mean_us) * (x - s.mean_us);
    s.stddev_us = std::sqrt(ss / (n - 1));
  }
  return s;
}

records::StatsProto ToProto(const Stats& s) {
  records::StatsProto p;
  p.set_median_us(s.median_us);
  p.set_min_us(s.min_us);
  p.set_max_us(s.max_us);
  p.set_mean_us(s.mean_us);
  p.set_stddev_us(s.stddev_us);
  p.set_repeats(s.repeats);
  p.set_warmups(s.warmups);
  p.set_host_us(s.host_us);
  p.set_l2_flush(s.l2_flush);
  return p;
}

Stats FromProto(const records::StatsProto& p) {
  return Stats{p.median_us(), p.min_us(), p.max_us(), p.mean_us(), p.stddev_us(),
               p.repeats(),   p.warmups(), p.host_us(), p.l2_flush()};
}

}  // namespace opsched
