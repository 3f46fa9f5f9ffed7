// The subcommands of the `opsched` CLI. Each Add*Command registers itself on `app`; its
// callback stores the exit code in `*exit_code`.
#pragma once

#include <string>
#include <string_view>

#include <CLI/CLI.hpp>

#include "core/l2_flush.h"

namespace opsched::tools {

void AddRecordsCommand(CLI::App& app, int* exit_code);
void AddTuneCommand(CLI::App& app, int* exit_code);
void AddExplainCommand(CLI::App& app, int* exit_code);
void AddOpsCommand(CLI::App& app, int* exit_code);
void AddBenchCommand(CLI::App& app, int* exit_code);
void AddStudyCommand(CLI::App& app, int* exit_code);
// `opsched records train`, under the records command.
void AddRecordsTrainCommand(CLI::App* records, int* exit_code);

// --wide: tables print every column in full instead of fitting kTableWidth (120) columns.
// Sets *width to 0 when given.
void AddWideFlag(CLI::App* command, size_t* width);

// --l2-flush read|overwrite|none: how a GPU measurement empties L2 before each timed
// repetition (core/l2_flush.h; default read). Sets *flush.
void AddL2FlushOption(CLI::App* command, L2Flush* flush);

// Reads the whole suite at `path` before anything is measured. False, after printing
// each bad line's error ("SUITE:LINE: column C: message") and "opsched COMMAND: N bad
// line(s) in the suite" (or why the suite cannot be read) to stderr, when any line is bad.
bool SuiteIsGood(std::string_view command, const std::string& path);

}  // namespace opsched::tools
