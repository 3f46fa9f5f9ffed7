// Helpers the subcommands share (commands.h): the --wide flag, the suite check.
#include "core/format.h"
#include "core/table.h"
#include "registry/registry.h"
#include "tools/commands.h"
#include "tuner/suite.h"

namespace opsched::tools {

void AddWideFlag(CLI::App* command, size_t* width) {
  *width = kTableWidth;
  command->add_flag_callback("--wide", [width] { *width = 0; },
                             fmt::format("Print every table column in full (default: fit {} columns)", kTableWidth));
}

bool SuiteIsGood(std::string_view command, const std::string& path) {
  StatusOr<std::vector<SuiteEntry>> suite = ReadSuite(path, Registry::Global());
  if (!suite.ok()) {
    fmt::print(stderr, "opsched {}: {}\n", command, suite.status().message());
    return false;
  }
  const Status checked = CheckSuite(*suite, stderr);
  if (!checked.ok()) fmt::print(stderr, "opsched {}: {}\n", command, checked.message());
  return checked.ok();
}

}  // namespace opsched::tools
