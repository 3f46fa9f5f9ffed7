#include "tuner/stats.h"

#include <algorithm>
#include <cmath>
#include <numeric>

namespace opsched {

Stats Summarize(std::vector<double> samples, int warmups) {
  Stats s;
  s.warmups = warmups;
  s.repeats = static_cast<int>(samples.size());
  if (samples.empty()) return s;
  std::sort(samples.begin(), samples.end());
  const size_t n = samples.size();
  s.median_us = n % 2 ? samples[n / 2] : 0.5 * (samples[n / 2 - 1] + samples[n / 2]);
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

}  // namespace opsched
