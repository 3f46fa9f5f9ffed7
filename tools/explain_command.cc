#include <memory>

#include "core/format.h"
#include "opsched/runtime.h"
#include "tools/commands.h"

namespace opsched::tools {

// `opsched explain`: the decision for one workload and every candidate considered.
void AddExplainCommand(CLI::App& app, int* exit_code) {
  auto records = std::make_shared<std::vector<std::string>>();
  auto line = std::make_shared<std::string>();
  auto target = std::make_shared<std::string>();
  auto options = std::make_shared<DispatchOptions>();
  CLI::App* explain = app.add_subcommand("explain", "Show which implementation a workload gets and why");
  explain->add_option("workload", *line, "A workload line, quoted")->required();
  explain->add_option("--records", *records, "Record logs to load");
  auto model = std::make_shared<std::string>();
  explain->add_option("--model", *model, "Selector model to load (opsched records train)");
  explain->add_option("--target", *target, "cpu or cuda:N (default: the first GPU, else cpu)");
  explain->add_flag("--deterministic", options->deterministic, "Deterministic implementations only");
  explain->add_flag("--transfer", options->allow_transferred_records,
                    "Allow records of the same arch from other devices or library versions");
  explain->callback([=] {
    RuntimeOptions o;
    o.record_files = *records;
    o.model_file = *model;
    o.dispatch = *options;
    if (!target->empty()) {
      StatusOr<Device> device = ParseDevice(*target);
      StatusOr<Target> t = device.ok() ? QueryTarget(*device) : StatusOr<Target>(device.status());
      if (!t.ok()) {
        fmt::print(stderr, "opsched explain: {}\n", t.status().message());
        *exit_code = 2;
        return;
      }
      o.target = *t;
    }
    StatusOr<std::unique_ptr<Runtime>> rt = Runtime::Create(o);
    if (rt.ok() && !(*rt)->model_status().ok()) {
      fmt::print(stderr, "opsched explain: {}; deciding without it\n", (*rt)->model_status().message());
    }
    if (rt.ok() && !(*rt)->records_note().empty()) {
      // Records of another device are not used here: say so rather than decide silently without them.
      fmt::print(stderr, "opsched explain: {}\n", (*rt)->records_note());
    }
    StatusOr<Explanation> e = rt.ok() ? (*rt)->Explain(*line) : StatusOr<Explanation>(rt.status());
    if (!e.ok()) {
      fmt::print(stderr, "opsched explain: {}\n", e.status().message());
      *exit_code = 1;
      return;
    }
    std::fputs(e->ToString().c_str(), stdout);
    *exit_code = 0;
  });
}

}  // namespace opsched::tools
