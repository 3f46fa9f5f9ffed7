#include "records/record_summary.h"

#include <google/protobuf/io/coded_stream.h>
#include <google/protobuf/wire_format_lite.h>

#include <cstring>

namespace opsched::records {
namespace {

using google::protobuf::internal::WireFormatLite;
using google::protobuf::io::CodedInputStream;

// Reads a length-delimited field's bytes as a view into the buffer.
bool ReadBytesView(CodedInputStream& in, std::string_view* out) {
  uint32_t length;
  if (!in.ReadVarint32(&length)) return false;
  if (length == 0) {
    *out = std::string_view();
    return true;
  }
  const void* data;
  int available;
  if (!in.GetDirectBufferPointer(&data, &available) || available < static_cast<int>(length)) {
    return false;
  }
  *out = std::string_view(static_cast<const char*>(data), length);
  return in.Skip(static_cast<int>(length));
}

// Finds fixed64 field `field` at the top level of a serialized message.
bool FindFixed64(std::string_view message, int field, uint64_t* out) {
  CodedInputStream in(reinterpret_cast<const uint8_t*>(message.data()),
                      static_cast<int>(message.size()));
  *out = 0;
  while (uint32_t tag = in.ReadTag()) {
    if (WireFormatLite::GetTagFieldNumber(tag) == field &&
        WireFormatLite::GetTagWireType(tag) == WireFormatLite::WIRETYPE_FIXED64) {
      return in.ReadLittleEndian64(out);
    }
    if (!WireFormatLite::SkipField(&in, tag)) return false;
  }
  return true;  // absent: proto3 default 0
}

bool FindDouble(std::string_view message, int field, double* out) {
  CodedInputStream in(reinterpret_cast<const uint8_t*>(message.data()),
                      static_cast<int>(message.size()));
  *out = 0;
  while (uint32_t tag = in.ReadTag()) {
    if (WireFormatLite::GetTagFieldNumber(tag) == field &&
        WireFormatLite::GetTagWireType(tag) == WireFormatLite::WIRETYPE_FIXED64) {
      uint64_t bits;
      if (!in.ReadLittleEndian64(&bits)) return false;
      std::memcpy(out, &bits, sizeof bits);
      return true;
    }
    if (!WireFormatLite::SkipField(&in, tag)) return false;
  }
  return true;
}

}  // namespace

bool SummarizeRecord(std::string_view payload, RecordSummary* out) {
  *out = RecordSummary();
  CodedInputStream in(reinterpret_cast<const uint8_t*>(payload.data()),
                      static_cast<int>(payload.size()));
  std::string_view stats;
  // Field numbers of records.proto's Record.
  while (uint32_t tag = in.ReadTag()) {
    const int field = WireFormatLite::GetTagFieldNumber(tag);
    const auto type = WireFormatLite::GetTagWireType(tag);
    const bool delimited = type == WireFormatLite::WIRETYPE_LENGTH_DELIMITED;
    const bool varint = type == WireFormatLite::WIRETYPE_VARINT;
    bool ok = true;
    if (field == 1 && varint) {
      ok = in.ReadVarint32(&out->format_version);
    } else if (field == 2 && delimited) {
      ok = ReadBytesView(in, &out->workload);
    } else if (field == 3 && delimited) {
      ok = ReadBytesView(in, &out->target);
    } else if (field == 4 && delimited) {
      ok = ReadBytesView(in, &out->implementation);
    } else if (field == 5 && delimited) {
      ok = ReadBytesView(in, &out->config);
    } else if (field == 6 && delimited) {
      ok = ReadBytesView(in, &stats);
    } else if (field == 7 && varint) {
      uint32_t status;
      ok = in.ReadVarint32(&status);
      out->status = static_cast<int>(status);
    } else {
      ok = WireFormatLite::SkipField(&in, tag);
    }
    if (!ok) return false;
  }
  if (!in.ConsumedEntireMessage()) return false;
  // WorkloadProto.hash = 5, TargetProto.fingerprint = 1, StatsProto.median_us = 1.
  return FindFixed64(out->workload, 5, &out->workload_hash) &&
         FindFixed64(out->target, 1, &out->fingerprint) &&
         FindDouble(stats, 1, &out->median_us);
}

}  // namespace opsched::records
