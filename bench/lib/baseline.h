// Baselines of opsched bench: JSON files (the Baseline message of bench_report.proto),
// one per target kind and device name, holding the tuned median of each workload.
#pragma once

#include <string>
#include <string_view>

#include "bench/lib/bench_report.pb.h"
#include "core/status.h"
#include "core/target.h"

namespace opsched::bench {

std::string DefaultBaselinePath(const Target& target);  // bench/baselines/<kind>-<device>.json

// Parses a baseline's JSON text and checks it: each entry names a workload (printable,
// once) with a finite median above 0 µs, finite, non-negative bounds and a known L2 flush
// (or none). `name` is used in messages.
StatusOr<Baseline> ParseBaseline(std::string_view json, const std::string& name);
// The L2 flush that measured entry `e` on `target` (core/l2_flush.h's name; empty on a
// CPU): "overwrite" for GPU entries written before baselines kept it.
std::string BaselineFlush(const BaselineEntry& e, const Target& target);
// Reads and parses the baseline at `path`: NotFound when there is none.
StatusOr<Baseline> LoadBaseline(const std::string& path);
// Writes this report's tuned medians into the baseline at `path`, keeping the entries of
// workloads the report does not measure (one file serves every suite of a device). The
// file is replaced atomically: an interrupted write leaves the old baseline.
Status WriteBaseline(const BenchReport& report, const std::string& path);

}  // namespace opsched::bench
