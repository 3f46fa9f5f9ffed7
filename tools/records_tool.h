// `opsched records`: inspect, check, merge, compact, export and import record logs.
// Each function prints to `out` (errors to stderr) and returns the process exit code:
// 0 success, 1 failure (unreadable or foreign file, bad input).
#pragma once

#include <cstdio>
#include <string>
#include <vector>

#include "core/table.h"

namespace opsched::tools {

struct RecordFilter {
  std::string match;  // substring of the workload line; empty matches all
  int limit = 50;     // rows printed at most (0: all)
  size_t width = kTableWidth;  // columns the table may take (0: every column in full, --wide)
};

int RecordsVerify(const std::string& log, std::FILE* out);
int RecordsShow(const std::string& log, const RecordFilter& filter, std::FILE* out);
int RecordsBest(const std::string& log, const RecordFilter& filter, std::FILE* out);
// Commands that write a log (merge, compact, import, repair) replace it atomically
// under its append lock (records/log_rewrite.h), so the output may be a log that a tune
// is appending to, or one of the inputs.

// Writes the union of `inputs`, each distinct valid record once, to `output`.
int RecordsMerge(const std::vector<std::string>& inputs, const std::string& output,
                 std::FILE* out);
// Writes to `output` the `keep` fastest ok records (distinct implementation and config)
// of every (workload, target) of `input`, plus the failures that still matter: one
// record of each distinct final failure (wrong result, launch error, ...), and for a
// candidate that timed out or crashed and never succeeded, its record with the highest
// attempt count (so a pending retry stays pending and an exhausted one stays final).
// A timeout or crash of a candidate that also has an ok record was transient: dropped.
int RecordsCompact(const std::string& input, const std::string& output, int keep,
                   std::FILE* out);
// One JSON object per line.
int RecordsExport(const std::string& log, std::FILE* out);
// Appends the records of a JSON-lines file to `output`; writes nothing when any line
// is bad (each bad line is reported with its number) or the write fails.
int RecordsImport(const std::string& json, const std::string& output, std::FILE* out);
// Writes to `output` a clean log of every intact, valid record of `input` (a log with a
// damaged header, torn frames, corrupted stretches); says what was left out.
int RecordsRepair(const std::string& input, const std::string& output, std::FILE* out);

}  // namespace opsched::tools
