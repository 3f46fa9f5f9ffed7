#include "tuner/suite.h"

#include <sstream>

#include "core/format.h"
#include "core/read_file.h"

namespace opsched {

std::vector<SuiteEntry> ParseSuite(const std::string& text, const std::string& name,
                                   const Registry& registry) {
  std::vector<SuiteEntry> entries;
  std::istringstream in(text);
  std::string line;
  int number = 0;
  while (std::getline(in, line)) {
    ++number;
    if (IsBlankOrComment(line)) continue;
    SuiteEntry e;
    e.line = number;
    e.text = line.substr(0, line.find('#'));
    while (!e.text.empty() && std::isspace(static_cast<unsigned char>(e.text.back()))) e.text.pop_back();
    e.text = EscapeControlCharacters(e.text);  // shown in tables and reports
    StatusOr<Workload> w = registry.ParseCanonical(line);
    if (w.ok()) {
      e.workload = *std::move(w);
    } else {
      e.error = Status(w.status().code(), fmt::format("{}:{}: {}", name, number, w.status().message()));
    }
    entries.push_back(std::move(e));
  }
  return entries;
}

std::vector<std::string> BadLines(const std::vector<SuiteEntry>& suite) {
  std::vector<std::string> bad;
  for (const SuiteEntry& e : suite) {
    if (!e.error.ok()) bad.emplace_back(Message(e.error));
  }
  return bad;
}

Status CheckSuite(const std::vector<SuiteEntry>& suite, std::FILE* errors) {
  const std::vector<std::string> bad = BadLines(suite);
  for (const std::string& error : bad) fmt::print(errors, "{}\n", error);
  if (bad.empty()) return absl::OkStatus();
  return absl::InvalidArgumentError(fmt::format("{} bad line(s) in the suite", bad.size()));
}

StatusOr<std::vector<SuiteEntry>> ReadSuite(const std::string& path, const Registry& registry) {
  OPSCHED_ASSIGN_OR_RETURN(std::string text, ReadFile(path, "suite"));
  return ParseSuite(text, path, registry);
}

}  // namespace opsched
