#include "bench/lib/baseline.h"

#include <google/protobuf/util/json_util.h>

#include <cctype>
#include <cmath>
#include <set>

#include "core/atomic_file.h"
#include "core/format.h"
#include "core/l2_flush.h"
#include "core/read_file.h"

namespace opsched::bench {
namespace {

std::string Slug(std::string s) {
  for (char& c : s) c = std::isalnum(static_cast<unsigned char>(c)) ? std::tolower(c) : '-';
  return s;
}

bool Printable(std::string_view s) {
  for (char c : s) {
    if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f) return false;
  }
  return true;
}

bool Time(double us) { return std::isfinite(us) && us >= 0; }

}  // namespace

std::string DefaultBaselinePath(const Target& target) {
  return fmt::format("bench/baselines/{}-{}.json", DeviceKindName(target.kind), Slug(target.device_name));
}

std::string BaselineFlush(const BaselineEntry& e, const Target& target) {
  if (!e.l2_flush().empty() || target.kind == DeviceKind::kCpu) return e.l2_flush();
  return std::string(L2FlushName(L2Flush::kOverwrite));
}

StatusOr<Baseline> ParseBaseline(std::string_view json, const std::string& name) {
  Baseline b;
  auto s = google::protobuf::util::JsonStringToMessage(
      google::protobuf::StringPiece(json.data(), json.size()), &b);
  if (!s.ok()) return absl::InvalidArgumentError(fmt::format("bad baseline {}: {}", name, s.ToString()));
  std::set<std::string> seen;
  for (int i = 0; i < b.entries_size(); ++i) {
    const BaselineEntry& e = b.entries(i);
    std::string problem;
    if (e.workload().empty() || !Printable(e.workload())) {
      problem = "names no printable workload";
    } else if (!seen.insert(e.workload()).second) {
      problem = fmt::format("repeats workload '{}'", e.workload());
    } else if (!(Time(e.median_us()) && e.median_us() > 0)) {
      problem = fmt::format("has median {} µs", e.median_us());
    } else if (!Time(e.ci_low_us()) || !Time(e.ci_high_us())) {
      problem = fmt::format("has bounds {} to {} µs", e.ci_low_us(), e.ci_high_us());
    } else if (!e.l2_flush().empty() && !ParseL2Flush(e.l2_flush()).ok()) {
      problem = "names an unknown L2 flush (read, overwrite or none)";
    }
    if (!problem.empty()) {
      return absl::InvalidArgumentError(fmt::format("bad baseline {}: entry {} {}", name, i, problem));
    }
  }
  return b;
}

StatusOr<Baseline> LoadBaseline(const std::string& path) {
  StatusOr<std::string> text = ReadFile(path, "baseline");
  if (absl::IsNotFound(text.status())) {
    return absl::NotFoundError(fmt::format("no baseline at {}", path));
  }
  if (!text.ok()) return text.status();
  return ParseBaseline(*text, path);
}

Status WriteBaseline(const BenchReport& report, const std::string& path) {
  std::set<std::string> measured;
  for (const BenchEntry& e : report.entries()) {
    if (e.verdict() != "error") measured.insert(e.workload());
  }
  Baseline b;
  if (StatusOr<Baseline> old = LoadBaseline(path); old.ok()) {
    for (const BaselineEntry& e : old->entries()) {
      if (!measured.count(e.workload())) *b.add_entries() = e;
    }
  } else if (!absl::IsNotFound(old.status())) {
    return old.status();
  }
  *b.mutable_target() = report.target();
  for (const BenchEntry& e : report.entries()) {
    if (e.verdict() == "error") continue;
    BaselineEntry* be = b.add_entries();
    be->set_workload(e.workload());
    be->set_median_us(e.tuned().median_us());
    be->set_ci_low_us(e.tuned().ci_low_us());
    be->set_ci_high_us(e.tuned().ci_high_us());
    be->set_implementation(e.tuned().implementation());
    be->set_config(e.tuned().config());
    be->set_l2_flush(report.l2_flush());
  }
  google::protobuf::util::JsonPrintOptions o;
  o.add_whitespace = true;
  o.preserve_proto_field_names = true;
  o.always_print_primitive_fields = true;
  std::string json;
  auto printed = google::protobuf::util::MessageToJsonString(b, &json, o);
  if (!printed.ok()) return absl::InternalError(fmt::format("baseline to JSON: {}", printed.ToString()));
  return WriteFileAtomically(path, json);
}

}  // namespace opsched::bench
