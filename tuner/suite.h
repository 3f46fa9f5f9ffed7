// A suite: a file of workload lines (blank lines and # comments allowed). Each line is
// parsed and canonicalised on its own; a bad line carries its error with its line and
// column. `opsched tune` and `opsched bench` refuse a suite with any bad line before they
// measure anything (BadLines); the library's TuneSession and RunBench report such lines
// and run the rest.
#pragma once

#include <cstdio>
#include <string>
#include <vector>

#include "core/status.h"
#include "core/workload.h"
#include "registry/registry.h"

namespace opsched {

struct SuiteEntry {
  int line = 0;       // 1-based line number
  std::string text;   // the line as written (comment stripped)
  Workload workload;  // canonical, when error is OK
  Status error;       // "suite.txt:4: column 23: ..." when the line is bad
};

// The non-blank entries of the suite file; an error only when the file cannot be read.
StatusOr<std::vector<SuiteEntry>> ReadSuite(const std::string& path, const Registry& registry);
std::vector<SuiteEntry> ParseSuite(const std::string& text, const std::string& name,
                                   const Registry& registry);
// The errors of the suite's bad lines ("suite.txt:4: column 23: ..."), in line order;
// empty when every line parses.
std::vector<std::string> BadLines(const std::vector<SuiteEntry>& suite);
// Prints each bad line's error to `errors`, then returns InvalidArgument "N bad line(s) in
// the suite"; OK (printing nothing) when every line parses. What tune and bench do before
// measuring anything.
Status CheckSuite(const std::vector<SuiteEntry>& suite, std::FILE* errors);

}  // namespace opsched
