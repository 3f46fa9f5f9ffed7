// Which failures are final. A timeout or a crash can come from outside the candidate — a
// loaded machine, a timeout set too short, another process's fault on the device — so a
// candidate that timed out or crashed is measured again by a later session, until it has
// been measured kMaxAttempts times (tuner/retry.h decides; `opsched tune --no-retry`
// turns it off). Every other failure (a wrong result, a launch error, out of memory, not
// applicable) is a property of the candidate and final at once.
#pragma once

#include <algorithm>
#include <cstdint>

#include "records/records.pb.h"

namespace opsched::records {

inline constexpr int kMaxAttempts = 2;

inline bool IsRetryable(RecordStatus status) { return status == TIMEOUT || status == CRASHED; }

// Record.attempt, with 0 (records written before attempts were counted) read as 1.
inline int AttemptNumber(int32_t stored) { return std::max<int32_t>(1, stored); }

}  // namespace opsched::records
