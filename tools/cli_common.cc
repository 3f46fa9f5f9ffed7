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

void AddL2FlushOption(CLI::App* command, L2Flush* flush) {
  command
      ->add_option_function<std::string>(
          "--l2-flush", [flush](const std::string& name) { *flush = ParseL2Flush(name).value_or(L2Flush::kRead); },
          "How L2 is emptied before each timed repetition on a GPU: read (a kernel reads a buffer twice the L2 "
          "size), overwrite (a memset of it; its write-back is timed with the op) or none")
      ->check(CLI::IsMember({"read", "overwrite", "none"}))
      ->default_str("read");
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
