#include "records/validate.h"

#include <google/protobuf/stubs/common.h>

#include <cmath>

#include "core/format.h"
#include "core/l2_flush.h"
#include "records/convert.h"
#include "records/log_format.h"
#include "records/record_summary.h"

namespace opsched::records {
namespace {

constexpr size_t kMaxNameBytes = 256;

Status Invalid(std::string message) { return absl::InvalidArgumentError(std::move(message)); }

bool Printable(std::string_view s) {
  for (char c : s) {
    const auto u = static_cast<unsigned char>(c);
    if (u < 0x20 || u == 0x7f) return false;
  }
  return true;
}

Status CheckTime(std::string_view name, double us) {
  if (!std::isfinite(us) || us < 0) return Invalid(fmt::format("{} is {} µs", name, us));
  return absl::OkStatus();
}

}  // namespace

Status ValidateWorkload(const WorkloadProto& proto, Workload* out) {
  StatusOr<Workload> w = FromProto(proto);
  if (!w.ok()) return Invalid(fmt::format("workload: {}", w.status().message()));
  const std::string text = w->ToString();
  // The text form must read back as itself (a one-element list prints like an integer,
  // so the comparison is of the texts; the hash below covers the structure).
  StatusOr<Workload> back = ParseWorkload(text);
  if (!back.ok() || back->ToString() != text) {
    return Invalid(fmt::format("workload '{}' does not read back from its text form{}", text,
                               back.ok() ? "" : fmt::format(" ({})", back.status().message())));
  }
  if (proto.key() != text) {
    return Invalid(fmt::format("workload is stored with key '{}' but its fields give '{}'",
                               proto.key(), text));
  }
  if (proto.hash() != w->hash()) {
    return Invalid(fmt::format("workload '{}' is stored with hash {:016x} but hashes to {:016x}",
                               text, proto.hash(), w->hash()));
  }
  if (out != nullptr) *out = *std::move(w);
  return absl::OkStatus();
}

Status ValidateTarget(const TargetProto& proto, Target* out) {
  StatusOr<Target> t = FromProto(proto);
  if (!t.ok()) return Invalid(fmt::format("target: {}", t.status().message()));
  if (!Printable(proto.device_name()) || !Printable(proto.arch())) {
    return Invalid("target: device name or arch holds a control character");
  }
  if (t->fingerprint() != proto.fingerprint()) {
    return Invalid(fmt::format(
        "target '{}' is stored with fingerprint {:016x} but its fields give {:016x}",
        proto.device_name(), proto.fingerprint(), t->fingerprint()));
  }
  if (out != nullptr) *out = *std::move(t);
  return absl::OkStatus();
}

Status ValidateConfig(const ConfigProto& proto, Config* out) {
  StatusOr<Config> c = FromProto(proto);
  if (!c.ok()) return Invalid(fmt::format("config: {}", c.status().message()));
  const std::string text = c->ToString();
  StatusOr<Config> back = ParseConfig(text);
  if (!Printable(text) || !back.ok() || back->ToString() != text) {
    return Invalid(fmt::format("config '{}' does not read back from its text form", text));
  }
  if (out != nullptr) *out = *std::move(c);
  return absl::OkStatus();
}

Status ValidateOutcome(const RecordOutcome& o) {
  if (o.format_version < 1 || o.format_version > kFormatVersion) {
    return Invalid(fmt::format("record format version {}; this build reads versions 1 to {}",
                               o.format_version, kFormatVersion));
  }
  if (o.implementation.empty() || o.implementation.size() > kMaxNameBytes ||
      !Printable(o.implementation)) {
    return Invalid("the implementation name is empty, too long or not printable");
  }
  if (o.status == STATUS_UNSPECIFIED || !RecordStatus_IsValid(o.status)) {
    return Invalid(fmt::format("unknown record status {}", o.status));
  }
  const StatsProto& s = o.stats != nullptr ? *o.stats : StatsProto::default_instance();
  OPSCHED_RETURN_IF_ERROR(CheckTime("median", s.median_us()));
  OPSCHED_RETURN_IF_ERROR(CheckTime("min", s.min_us()));
  OPSCHED_RETURN_IF_ERROR(CheckTime("max", s.max_us()));
  OPSCHED_RETURN_IF_ERROR(CheckTime("mean", s.mean_us()));
  OPSCHED_RETURN_IF_ERROR(CheckTime("standard deviation", s.stddev_us()));
  OPSCHED_RETURN_IF_ERROR(CheckTime("host", s.host_us()));
  if (s.repeats() < 0 || s.warmups() < 0) return Invalid("negative repeat or warm-up count");
  if (!s.l2_flush().empty() && !ParseL2Flush(s.l2_flush()).ok()) {
    return Invalid(fmt::format("unknown L2 flush of {} bytes (read, overwrite or none)", s.l2_flush().size()));
  }
  if (o.status == OK && !(s.median_us() > 0 && s.repeats() >= 1)) {
    return Invalid(fmt::format("ok record without a measurement (median {} µs, {} repeats)",
                               s.median_us(), s.repeats()));
  }
  if (o.workspace_bytes < 0) return Invalid(fmt::format("workspace of {} bytes", o.workspace_bytes));
  if (o.attempt < 0) return Invalid(fmt::format("attempt {}", o.attempt));
  return absl::OkStatus();
}

namespace {

Status ValidateParts(const Record& r) {
  OPSCHED_RETURN_IF_ERROR(ValidateWorkload(r.workload(), nullptr));
  OPSCHED_RETURN_IF_ERROR(ValidateTarget(r.target(), nullptr));
  return ValidateConfig(r.config(), nullptr);
}

}  // namespace

Status ValidateRecord(const Record& r) {
  OPSCHED_RETURN_IF_ERROR(ValidateOutcome(RecordOutcome{r.format_version(), r.implementation(),
                                                        r.status(), &r.stats(),
                                                        r.workspace_bytes(), r.attempt()}));
  return ValidateParts(r);
}

bool IsValidUtf8(std::string_view text) {
  return google::protobuf::internal::IsStructurallyValidUTF8(text.data(),
                                                             static_cast<int>(text.size()));
}

Status RecordSkimmer::Skim(std::string_view payload, RecordSummary* out) {
  if (!SummarizeRecord(payload, out) ||
      !structure_.ParseFromArray(payload.data(), static_cast<int>(payload.size())) ||
      !stats_.ParseFromArray(out->stats.data(), static_cast<int>(out->stats.size())) ||
      !provenance_.ParseFromArray(out->provenance.data(), static_cast<int>(out->provenance.size()))) {
    // (SummarizeRecord has checked every occurrence of the string fields for UTF-8.)
    return absl::DataLossError("not a Record encoding");
  }
  return ValidateOutcome(RecordOutcome{out->format_version, out->implementation, out->status,
                                       &stats_, out->workspace_bytes, out->attempt});
}

Status ParseValidRecord(std::string_view payload, Record* record) {
  RecordSkimmer skimmer;
  RecordSummary summary;
  OPSCHED_RETURN_IF_ERROR(skimmer.Skim(payload, &summary));
  if (!record->ParseFromArray(payload.data(), static_cast<int>(payload.size()))) {
    return absl::DataLossError("not a Record encoding");
  }
  return ValidateParts(*record);
}

}  // namespace opsched::records
