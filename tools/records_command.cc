#include <memory>

#include "tools/commands.h"
#include "tools/records_tool.h"

namespace opsched::tools {

void AddRecordsCommand(CLI::App& app, int* exit_code) {
  CLI::App* records = app.add_subcommand("records", "Inspect and maintain tuning record logs");
  records->require_subcommand(1);

  auto filter = std::make_shared<RecordFilter>();
  auto log = std::make_shared<std::string>();

  CLI::App* verify = records->add_subcommand("verify", "Check a log: intact and skipped records");
  verify->add_option("log", *log, "Records log")->required();
  verify->callback([=] { *exit_code = RecordsVerify(*log, stdout); });

  CLI::App* show = records->add_subcommand("show", "List the records of a log");
  show->add_option("log", *log, "Records log")->required();
  show->add_option("--match", filter->match, "Only workloads whose line contains this text");
  show->add_option("--limit", filter->limit, "Rows to print (0: all)")->capture_default_str();
  AddWideFlag(show, &filter->width);
  show->callback([=] { *exit_code = RecordsShow(*log, *filter, stdout); });

  CLI::App* best = records->add_subcommand("best", "The fastest record of every (workload, target)");
  best->add_option("log", *log, "Records log")->required();
  best->add_option("--match", filter->match, "Only workloads whose line contains this text");
  best->add_option("--limit", filter->limit, "Rows to print (0: all)")->capture_default_str();
  AddWideFlag(best, &filter->width);
  best->callback([=] { *exit_code = RecordsBest(*log, *filter, stdout); });

  auto inputs = std::make_shared<std::vector<std::string>>();
  auto output = std::make_shared<std::string>();
  CLI::App* merge = records->add_subcommand("merge", "Merge logs, each distinct record once");
  merge->add_option("logs", *inputs, "Logs to merge")->required();
  merge->add_option("-o,--out", *output, "Merged log (replaced atomically)")->required();
  merge->callback([=] { *exit_code = RecordsMerge(*inputs, *output, stdout); });

  auto keep = std::make_shared<int>(3);
  CLI::App* compact = records->add_subcommand(
      "compact", "Keep the best N records per (workload, target) plus failures");
  compact->add_option("log", *log, "Records log")->required();
  compact->add_option("-o,--out", *output, "Compacted log (replaced atomically)")->required();
  compact->add_option("--keep", *keep, "Fastest distinct configs kept per (workload, target)")
      ->capture_default_str();
  compact->callback([=] { *exit_code = RecordsCompact(*log, *output, *keep, stdout); });

  CLI::App* exporter = records->add_subcommand("export", "Print records as JSON, one per line");
  exporter->add_option("log", *log, "Records log")->required();
  exporter->callback([=] { *exit_code = RecordsExport(*log, stdout); });

  CLI::App* repair = records->add_subcommand(
      "repair", "Write a clean log of every intact record (after a damaged header or frames)");
  repair->add_option("log", *log, "Records log")->required();
  repair->add_option("-o,--out", *output, "Repaired log (may be LOG itself; replaced atomically)")
      ->required();
  repair->callback([=] { *exit_code = RecordsRepair(*log, *output, stdout); });

  auto json = std::make_shared<std::string>();
  CLI::App* importer = records->add_subcommand("import", "Append JSON-lines records to a log");
  importer->add_option("--json", *json, "JSON-lines file (as written by export)")->required();
  importer->add_option("--out", *output, "Log to append to (created if missing)")->required();
  importer->callback([=] { *exit_code = RecordsImport(*json, *output, stdout); });

  AddRecordsTrainCommand(records, exit_code);
}

}  // namespace opsched::tools
