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
  uint64_t workload_hash = 0;
  std::string_view target;  // serialized TargetProto
  uint64_t fingerprint = 0;
  std::string_view implementation;
  std::string_view config;  // serialized ConfigProto
  double median_us = 0;
  int status = 0;
};

// False when `payload` is not a well-formed Record encoding.
bool SummarizeRecord(std::string_view payload, RecordSummary* out);

}  // namespace opsched::records
