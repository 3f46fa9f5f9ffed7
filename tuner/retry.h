// Resuming from the log: whether a candidate the log already has results for is done,
// or due another measurement. A logged ok result or a final failure is done; a timeout
// or crash (records/attempts.h) is measured again until the candidate has been measured
// records::kMaxAttempts times, unless retries are off (`opsched tune --no-retry`).
#pragma once

#include <cstdint>
#include <vector>

#include "records/records.pb.h"

namespace opsched {

// One logged result of a candidate (a workload, target, implementation and config).
struct LoggedResult {
  records::RecordStatus status = records::STATUS_UNSPECIFIED;
  int32_t attempt = 0;  // Record.attempt as stored (0: before attempts were counted)
  double call_us = 0;  // RecordEntry::call_us
};

struct RetryDecision {
  bool measure = false;  // measure the candidate (again) in this session
  int attempt = 1;       // the attempt number of that measurement
  double known_us = 0;   // when not measuring: the fastest ok call time, or -1 for a failure
};

// The decision for one candidate given its logged results (any order; empty when it was
// never measured).
RetryDecision DecideRetry(const std::vector<LoggedResult>& logged, bool no_retry);

}  // namespace opsched
