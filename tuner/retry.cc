#include "tuner/retry.h"

#include <algorithm>

#include "records/attempts.h"

namespace opsched {

RetryDecision DecideRetry(const std::vector<LoggedResult>& logged, bool no_retry) {
  RetryDecision d;
  if (logged.empty()) {
    d.measure = true;
    return d;
  }
  double best = 0;
  bool final_failure = false;
  // Measurements so far: the records that timed out or crashed, or the highest attempt
  // number among them when records of earlier attempts were compacted away.
  int count = 0, highest = 0;
  for (const LoggedResult& r : logged) {
    if (r.status == records::OK) {
      if (r.call_us > 0 && (best == 0 || r.call_us < best)) best = r.call_us;
    } else if (records::IsRetryable(r.status)) {
      ++count;
      highest = std::max(highest, records::AttemptNumber(r.attempt));
    } else {
      final_failure = true;
    }
  }
  if (best > 0) {
    d.known_us = best;
    return d;
  }
  const int attempts = std::max(count, highest);
  d.known_us = -1;
  if (final_failure || no_retry || attempts >= records::kMaxAttempts) return d;
  d.measure = true;
  d.attempt = attempts + 1;
  return d;
}

}  // namespace opsched
