// A synthetic records log for scale measurements: `workloads` scatter workloads of
// different shapes, each measured with `configs` configs on one GPU target.
#pragma once

#include <string>

#include "core/status.h"

namespace opsched::bench {

// Writes the corpus to `path` (replacing it); returns the number of records written.
StatusOr<int64_t> WriteRecordsCorpus(const std::string& path, int workloads, int configs);
// The workload line of corpus workload `i`.
std::string CorpusWorkloadLine(int i);

}  // namespace opsched::bench
