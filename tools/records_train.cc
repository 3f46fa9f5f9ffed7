// `opsched records train`: fits the selector (selector/) on every ok record of a target
// kind and writes its model file.
#include <fstream>
#include <memory>

#include "core/format.h"
#include "records/database.h"
#include "selector/model_file.h"
#include "selector/train.h"
#include "registry/registry.h"
#include "tools/commands.h"
#include "tuner/suite.h"

namespace opsched::tools {
namespace {

struct TrainFlags {
  std::vector<std::string> records;
  std::string out;
  std::string kind = "cuda";
  std::string arch;
  std::vector<std::string> exclude_suites;
  int rounds = 200;
  int depth = 8;
  bool keep_xgboost = false;
};

int Train(const TrainFlags& f) {
  records::Database db;
  for (const std::string& path : f.records) {
    if (Status s = db.Load(path); !s.ok()) {
      fmt::print(stderr, "opsched records train: {}\n", s.message());
      return 2;
    }
  }
  TrainOptions o;
  o.target_kind = f.kind;
  o.arch = f.arch;
  o.booster.rounds = f.rounds;
  o.booster.max_depth = f.depth;
  o.keep_xgboost = f.keep_xgboost;
  for (const std::string& path : f.exclude_suites) {
    StatusOr<std::vector<SuiteEntry>> suite = ReadSuite(path, Registry::Global());
    if (!suite.ok()) {
      fmt::print(stderr, "opsched records train: {}\n", suite.status().message());
      return 2;
    }
    for (const SuiteEntry& e : *suite) {
      if (e.error.ok()) o.exclude.insert(e.workload.hash());
    }
  }
  std::string summary;
  StatusOr<selector::SelectorModelProto> model = TrainSelector(Registry::Global(), {&db}, o, &summary);
  if (!model.ok()) {
    fmt::print(stderr, "opsched records train: {}\n", model.status().message());
    return 1;
  }
  for (const std::string& path : f.records) model->add_record_files(path);
  if (Status s = selector::WriteModel(f.out, *model); !s.ok()) {
    fmt::print(stderr, "opsched records train: {}\n", s.message());
    return 2;
  }
  std::fputs(summary.c_str(), stdout);
  if (!o.exclude.empty()) fmt::print("  left out: {} workloads of {}\n", o.exclude.size(), fmt::join(f.exclude_suites, ", "));
  fmt::print("model written to {}\n", f.out);
  return 0;
}

}  // namespace

void AddRecordsTrainCommand(CLI::App* records, int* exit_code) {
  auto flags = std::make_shared<TrainFlags>();
  CLI::App* train = records->add_subcommand(
      "train", "Fit the selector (XGBoost) on every ok record of a target kind: the choice for untuned workloads");
  train->add_option("--records", flags->records, "Record logs to learn from")->required();
  train->add_option("-o,--out", flags->out, "Model file to write (replaced atomically)")->required();
  train->add_option("--kind", flags->kind, "Target kind of the records used (cuda, cpu)")->capture_default_str();
  train->add_option("--arch", flags->arch, "Arch key of the records used, e.g. cuda/sm_90 (default: the most common)");
  train->add_option("--exclude-suite", flags->exclude_suites,
                    "Leave out the workloads of these suites (a held-out set is never fitted on)");
  train->add_option("--rounds", flags->rounds, "Boosting rounds")->capture_default_str();
  train->add_option("--depth", flags->depth, "Tree depth")->capture_default_str();
  train->add_flag("--keep-xgboost", flags->keep_xgboost,
                  "Also keep XGBoost's own model of each booster in the file (about five times the size; serving "
                  "needs only the trees)");
  train->callback([=] { *exit_code = Train(*flags); });
}

}  // namespace opsched::tools
