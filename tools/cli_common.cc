// Helpers the subcommands share (commands.h): the suite check.
#include "core/format.h"
#include "strategies/registry.h"
#include "tools/commands.h"
#include "tuner/suite.h"

namespace opsched::tools {

bool SuiteIsGood(std::string_view command, const std::string& path) {
  StatusOr<std::vector<SuiteEntry>> suite = ReadSuite(path, Registry::Global());
  if (!suite.ok()) {
    fmt::print(stderr, "opsched {}: {}\n", command, suite.status().message());
    return false;
  }
  const std::vector<std::string> bad = BadLines(*suite);
  for (const std::string& error : bad) fmt::print(stderr, "{}\n", error);
  if (!bad.empty()) fmt::print(stderr, "opsched {}: {} bad line(s) in the suite\n", command, bad.size());
  return bad.empty();
}

}  // namespace opsched::tools
