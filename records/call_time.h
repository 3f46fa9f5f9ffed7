// The time one call of a candidate costs a caller who calls it back to back: its device
// time, or its host time when the host is the slower side (a vendor call whose own
// overhead outlasts its kernels, or a call that waits for the device). Records are
// ranked by it, so a candidate that is fast on the device but slow to submit, or that
// synchronises, does not win on device time alone.
#pragma once

#include <algorithm>

#include "records/records.pb.h"

namespace opsched::records {

inline double CallUs(double device_us, double host_us) { return std::max(device_us, host_us); }

inline double CallUs(const StatsProto& s) { return CallUs(s.median_us(), s.host_us()); }

}  // namespace opsched::records
