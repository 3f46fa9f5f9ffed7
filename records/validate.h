// The rules a record must satisfy before anything uses it. One set of rules for every
// reader: the database loader (Database::Load and Add), `records import`, `records
// verify`, `records repair` and ReadRecords (export) all call these functions, so a
// record that one of them accepts is accepted by all, whatever the order of the log.
//
// A record is valid when
// - its format version is between 1 and this build's;
// - its workload parses (dtypes known, dimensions and strides within the limits of
//   core/tensor_desc.h), its text form reads back as itself, and its stored
//   key and hash are those of that workload;
// - its target's kind is known and its stored fingerprint is that of its fields;
// - its config has each knob once and its text form reads back as itself;
// - it names an implementation (printable, at most 256 bytes);
// - its status is one of records.proto's (not STATUS_UNSPECIFIED); an OK record has a
//   finite median above 0 µs from at least one repetition; every time is finite and
//   not negative; workspace bytes and the attempt count are not negative.
#pragma once

#include <google/protobuf/empty.pb.h>

#include <cstdint>
#include <string_view>

#include "core/config.h"
#include "core/status.h"
#include "core/target.h"
#include "core/workload.h"
#include "records/record_summary.h"
#include "records/records.pb.h"

namespace opsched::records {

// The parts of a record that are not sub-messages parsed on their own.
struct RecordOutcome {
  uint32_t format_version = 0;
  std::string_view implementation;
  int status = 0;
  const StatsProto* stats = nullptr;  // null: all zero
  int64_t workspace_bytes = 0;
  int32_t attempt = 0;
};

// Each returns InvalidArgument naming the broken rule. The workload, target and config
// checks also return the parsed value in `out` (may be null).
Status ValidateWorkload(const WorkloadProto& proto, Workload* out);
Status ValidateTarget(const TargetProto& proto, Target* out);
Status ValidateConfig(const ConfigProto& proto, Config* out);
Status ValidateOutcome(const RecordOutcome& outcome);
// All of the above.
Status ValidateRecord(const Record& record);
// Whether `text` is valid UTF-8 as protobuf's parser judges string fields.
bool IsValidUtf8(std::string_view text);

// The checks of a serialized record that need no workload, target or config parsed: the
// wire structure as protobuf's full parse judges it (DataLoss when it is not a Record
// encoding, or holds a sub-message twice), UTF-8 string fields, and ValidateOutcome.
// ParseValidRecord starts with it; the database loader calls it for every record and
// validates each distinct workload, target and config encoding once, so both accept
// exactly the same records. Reuses its scratch messages across calls.
class RecordSkimmer {
 public:
  // On success `out` views `payload`, and stats() holds the parsed stats.
  Status Skim(std::string_view payload, RecordSummary* out);
  const StatsProto& stats() const { return stats_; }

 private:
  google::protobuf::Empty structure_;  // every field unknown: protobuf checks the wire form
  StatsProto stats_;
  ProvenanceProto provenance_;
};

// Parses a serialized Record (DataLoss when it is not one) and validates it.
Status ParseValidRecord(std::string_view payload, Record* record);

}  // namespace opsched::records
