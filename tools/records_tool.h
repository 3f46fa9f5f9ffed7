// `opsched records`: inspect, check, merge, compact, export and import record logs.
// Each function prints to `out` (errors to stderr) and returns the process exit code:
// 0 success, 1 failure (unreadable or foreign file, bad input).
#pragma once

#include <cstdio>
#include <string>
#include <vector>

namespace opsched::tools {

struct RecordFilter {
  std::string match;  // substring of the workload line; empty matches all
  int limit = 50;     // rows printed at most (0: all)
};

int RecordsVerify(const std::string& log, std::FILE* out);
int RecordsShow(const std::string& log, const RecordFilter& filter, std::FILE* out);
int RecordsBest(const std::string& log, const RecordFilter& filter, std::FILE* out);
// Writes the union of `inputs`, each distinct record once, to `output` (atomically).
int RecordsMerge(const std::vector<std::string>& inputs, const std::string& output,
                 std::FILE* out);
// Writes to `output` the `keep` fastest ok records (distinct implementation and config)
// of every (workload, target) of `input`, plus each distinct failure.
int RecordsCompact(const std::string& input, const std::string& output, int keep,
                   std::FILE* out);
// One JSON object per line.
int RecordsExport(const std::string& log, std::FILE* out);
// Appends the records of a JSON-lines file to `output`; writes nothing when any line
// is bad (each bad line is reported with its number).
int RecordsImport(const std::string& json, const std::string& output, std::FILE* out);

}  // namespace opsched::tools
