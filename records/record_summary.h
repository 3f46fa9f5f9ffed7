// RecordSummary: the fields the database indexes, read from a serialized Record with
// protobuf's wire-format reader without parsing the whole message. Sub-messages are
// returned as their serialized bytes, to be parsed only when first seen.
#pragma once

#include <cstdint>
#include <string_view>

namespace opsched::records {

struct RecordSummary {
  uint32_t format_version = 0;
  std::string_view workload;  // serialized WorkloadProto
  std::string_view target;    // serialized TargetProto
  std::string_view implementation;
  std::string_view config;  // serialized ConfigProto
  std::string_view stats;   // serialized StatsProto
  int status = 0;
  std::string_view message;
  std::string_view provenance;  // serialized ProvenanceProto
  int64_t workspace_bytes = 0;
  int32_t attempt = 0;
};

// False when `payload` is not a well-formed Record encoding, or holds one of the
// sub-messages workload, target, config, stats or provenance twice (a full parse would
// merge them; protobuf never writes that, and ParseValidRecord refuses it too).
bool SummarizeRecord(std::string_view payload, RecordSummary* out);

}  // namespace opsched::records
