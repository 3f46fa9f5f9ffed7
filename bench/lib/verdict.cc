#include "bench/lib/verdict.h"

#include <algorithm>
#include <cmath>

namespace opsched::bench {

MedianEstimate EstimateMedian(std::vector<double> samples) {
  MedianEstimate e;
  e.samples = static_cast<int>(samples.size());
  if (samples.empty()) return e;
  std::sort(samples.begin(), samples.end());
  const int n = e.samples;
  e.median = n % 2 ? samples[n / 2] : 0.5 * (samples[n / 2 - 1] + samples[n / 2]);
  const double half = 0.98 * std::sqrt(static_cast<double>(n));
  const int lo = std::clamp(static_cast<int>(std::floor(n / 2.0 - half)), 1, n);
  const int hi = std::clamp(static_cast<int>(std::ceil(n / 2.0 + 1 + half)), 1, n);
  e.low = samples[lo - 1];
  e.high = samples[hi - 1];
  return e;
}

const char* VerdictName(Verdict v) {
  switch (v) {
    case Verdict::kRegression:
      return "regression";
    case Verdict::kImprovement:
      return "improvement";
    case Verdict::kNew:
      return "new";
    default:
      return "ok";
  }
}

Verdict Judge(const MedianEstimate& current, double baseline_median, double tolerance, double min_change_us) {
  if (baseline_median <= 0) return Verdict::kNew;
  if (current.low > baseline_median * (1 + tolerance) && current.low - baseline_median > min_change_us) {
    return Verdict::kRegression;
  }
  if (current.high < baseline_median * (1 - tolerance) && baseline_median - current.high > min_change_us) {
    return Verdict::kImprovement;
  }
  return Verdict::kOk;
}

}  // namespace opsched::bench
