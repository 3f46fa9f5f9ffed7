// The subcommands of the `opsched` CLI. Each Add*Command registers itself on `app`; its
// callback stores the exit code in `*exit_code`.
#pragma once

#include <CLI/CLI.hpp>

namespace opsched::tools {

void AddRecordsCommand(CLI::App& app, int* exit_code);
void AddTuneCommand(CLI::App& app, int* exit_code);
void AddExplainCommand(CLI::App& app, int* exit_code);
void AddOpsCommand(CLI::App& app, int* exit_code);
void AddBenchCommand(CLI::App& app, int* exit_code);
void AddStudyCommand(CLI::App& app, int* exit_code);
// `opsched records train`, under the records command.
void AddRecordsTrainCommand(CLI::App* records, int* exit_code);

}  // namespace opsched::tools
