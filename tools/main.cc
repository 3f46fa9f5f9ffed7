// opsched: the command-line tool (tune, bench, explain, ops, records).
#include <CLI/CLI.hpp>

#include <cstdio>
#include <exception>
#include <new>

#include "tools/commands.h"
#include "tuner/worker.h"

int main(int argc, char** argv) {
  // The tuner runs each candidate in a copy of this program started as a worker.
  int worker_exit = 0;
  if (opsched::MaybeRunWorker(argc, argv, &worker_exit)) return worker_exit;
  CLI::App app{"opsched: autotuning operator scheduling for GPU kernels"};
  app.require_subcommand(1);
  int exit_code = 0;
  opsched::tools::AddTuneCommand(app, &exit_code);
  opsched::tools::AddBenchCommand(app, &exit_code);
  opsched::tools::AddExplainCommand(app, &exit_code);
  opsched::tools::AddOpsCommand(app, &exit_code);
  opsched::tools::AddRecordsCommand(app, &exit_code);
  opsched::tools::AddStudyCommand(app, &exit_code);
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    // Usage errors exit 2 (CLI11 returns 0 for --help).
    const int code = app.exit(e);
    return code == 0 ? 0 : 2;
  } catch (const std::bad_alloc&) {
    // opsched reports errors as Status values and checks sizes before allocating; this
    // is the last line of defence, so that no command ends in an uncaught exception.
    std::fputs("opsched: out of memory\n", stderr);
    return 2;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "opsched: internal error: %s\n", e.what());
    return 2;
  }
  return exit_code;
}
