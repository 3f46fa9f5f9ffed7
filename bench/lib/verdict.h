// The regression verdict of opsched bench. A workload regresses only when its median is
// slower than the baseline's beyond the tolerance *and* beyond the noise measured in the
// same run: the lower 95% confidence bound of the current median must exceed the
// baseline median times (1 + tolerance) — and by more than an absolute floor, since a
// launch-bound op of a few µs moves by a few tenths of a µs from host to host. Medians and their bounds come from the pooled
// samples of repeated measurement rounds (distribution-free order statistics).
#pragma once

#include <string>
#include <vector>

namespace opsched::bench {

struct MedianEstimate {
  double median = 0;
  double low = 0;   // 95% confidence bound of the median
  double high = 0;
  int samples = 0;
};

// The median of `samples` with its 95% confidence interval by order statistics (the
// ranks n/2 -+ 0.98 sqrt(n) of the sorted samples).
MedianEstimate EstimateMedian(std::vector<double> samples);

enum class Verdict { kOk, kRegression, kImprovement, kNew };

const char* VerdictName(Verdict v);  // "ok", "regression", "improvement", "new"

// `baseline_median` <= 0 means the baseline has no entry (kNew, never a failure).
// `min_change_us`: a regression or improvement must also move the median bound by more
// than this many µs.
Verdict Judge(const MedianEstimate& current, double baseline_median, double tolerance, double min_change_us = 0);

}  // namespace opsched::bench
