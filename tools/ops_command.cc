#include <memory>
#include <optional>

#include "core/format.h"
#include "registry/registry.h"
#include "tools/commands.h"
#include "core/table.h"

namespace opsched::tools {

namespace {

std::string Traits(const ImplementationTraits& t) {
  std::string out;
  if (t.deterministic) out += "deterministic ";
  if (t.vendor_library) out += "vendor ";
  if (t.in_place) out += "in-place ";
  if (!out.empty()) out.pop_back();
  return out.empty() ? "-" : out;
}

std::string Domain(const KnobDomain& k) {
  std::string values;
  for (const KnobValue& v : k.values) values += (values.empty() ? "" : ",") + KnobValueToString(v);
  return fmt::format("{}={{{}}}", k.name, values);
}

}  // namespace

// `opsched ops`: the registry — ops, implementations with traits, strategy rules, and
// (for a given workload) each implementation's applicability and config space.
void AddOpsCommand(CLI::App& app, int* exit_code) {
  auto line = std::make_shared<std::string>();
  auto target_name = std::make_shared<std::string>("cpu");
  auto width = std::make_shared<size_t>(kTableWidth);
  CLI::App* ops = app.add_subcommand("ops", "List ops, implementations, strategies and spaces");
  ops->add_option("--workload", *line, "Show applicability and spaces for this workload");
  ops->add_option("--target", *target_name, "Target for --workload: cpu or cuda:N")->capture_default_str();
  AddWideFlag(ops, width.get());
  ops->callback([=] {
    const Registry& registry = Registry::Global();
    std::optional<Workload> workload;
    Target target = CpuTarget();
    if (!line->empty()) {
      StatusOr<Workload> w = registry.ParseCanonical(*line);
      if (!w.ok()) {
        fmt::print(stderr, "opsched ops: {}\n", w.status().message());
        *exit_code = 1;
        return;
      }
      workload = *w;
      StatusOr<Device> device = ParseDevice(*target_name);
      if (device.ok() && device->is_gpu()) {
        // Without the device (no GPU here) describe the H100-class target by kind only.
        StatusOr<Target> t = QueryTarget(*device);
        if (t.ok()) {
          target = *t;
        } else {
          target.kind = device->kind;
          target.device_name = "(not present)";
          target.sm_count = 132;
        }
      }
    }
    for (const OpDef* op : registry.ops()) {
      if (workload && op->name() != workload->op()) continue;
      std::string inputs, outputs;
      for (const auto& n : op->InputNames()) inputs += (inputs.empty() ? "" : ", ") + n;
      for (const auto& n : op->OutputNames()) outputs += (outputs.empty() ? "" : ", ") + n;
      fmt::print("op {}: inputs {}; outputs {}\n", op->name(), inputs, outputs);
      std::vector<Column> columns = {{.header = "implementation"},
                                     {.header = "device"},
                                     {.header = "traits", .min_width = 12, .importance = 2}};
      if (workload) {
        columns.push_back({.header = "applicable", .min_width = 24, .importance = 3});
        columns.push_back({.header = "space", .min_width = 24, .importance = 1});
      }
      Table impls(std::move(columns));
      for (const Implementation* impl : registry.ImplementationsOf(op->name())) {
        std::vector<std::string> row = {std::string(impl->name()),
                                        std::string(DeviceKindName(impl->device_kind())),
                                        Traits(impl->traits())};
        if (workload) {
          if (impl->device_kind() != target.kind) {
            row.push_back("other device");
            row.push_back("");
          } else {
            Status a = impl->Applicable(*workload, target);
            row.push_back(a.ok() ? "yes" : std::string(Message(a)));
            const ConfigSpace space = impl->Space(*workload, target);
            std::string knobs;
            for (const KnobDomain& k : space.knobs()) knobs += (knobs.empty() ? "" : " ") + Domain(k);
            for (const Constraint& c : space.constraints()) knobs += fmt::format(" [{}]", c.description);
            row.push_back(fmt::format("{} configs: {}", space.Enumerate().size(), knobs.empty() ? "-" : knobs));
          }
        }
        impls.AddRow(std::move(row));
      }
      impls.Print(stdout, *width);
      if (const Strategy* s = registry.FindStrategy(op->name())) {
        Table rules({{.header = "priority", .right = true}, {.header = "implementation"},
                     {.header = "when", .min_width = 40}});
        for (const StrategyRule& r : s->rules()) rules.AddRow({std::to_string(r.priority), r.implementation, r.when});
        fmt::print("strategy:\n");
        rules.Print(stdout, *width);
      }
      fmt::print("\n");
    }
    *exit_code = 0;
  });
}

}  // namespace opsched::tools
