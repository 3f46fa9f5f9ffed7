// opsched: the command-line tool (tune, bench, explain, ops, records).
#include <cstdio>
#include <string>

#include <CLI/CLI.hpp>

#include "strategies/register_all.h"
#include "tools/build_info.h"
#include "tools/commands.h"
#include "tools/guarded_main.h"
#include "tuner/worker.h"

int main(int argc, char** argv) {
  if (opsched::Status registered = opsched::RegisterAll(); !registered.ok()) {
    std::fprintf(stderr, "opsched: %s\n", std::string(registered.message()).c_str());
    return 1;
  }
  // The tuner runs each candidate in a copy of this program started as a worker.
  int worker_exit = 0;
  if (opsched::MaybeRunWorker(argc, argv, &worker_exit)) return worker_exit;
  CLI::App app{"opsched: autotuning operator scheduling for GPU kernels"};
  app.require_subcommand(1);
  app.set_version_flag("--version", [] {
    std::string text = opsched::tools::VersionText();
    if (!text.empty() && text.back() == '\n') text.pop_back();  // CLI11 ends the line itself
    return text;
  }, "Print the version, the git commit and the CUDA, cuDNN and cuBLAS versions built with, and exit");
  int exit_code = 0;
  opsched::tools::AddTuneCommand(app, &exit_code);
  opsched::tools::AddBenchCommand(app, &exit_code);
  opsched::tools::AddExplainCommand(app, &exit_code);
  opsched::tools::AddOpsCommand(app, &exit_code);
  opsched::tools::AddRecordsCommand(app, &exit_code);
  opsched::tools::AddStudyCommand(app, &exit_code);
  return opsched::tools::RunGuarded([&] {
    try {
      app.parse(argc, argv);
    } catch (const CLI::ParseError& e) {
      // Usage errors exit 2 (CLI11 returns 0 for --help).
      const int code = app.exit(e);
      return code == 0 ? 0 : 2;
    }
    return exit_code;
  });
}
