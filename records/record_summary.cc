#include "records/record_summary.h"

#include <google/protobuf/io/coded_stream.h>
#include <google/protobuf/wire_format_lite.h>

#include "records/validate.h"

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
  if (!in.GetDirectBufferPointer(&data, &available) || available < 0 ||
      static_cast<uint32_t>(available) < length) {
    return false;
  }
  *out = std::string_view(static_cast<const char*>(data), length);
  return in.Skip(static_cast<int>(length));
}

}  // namespace

bool SummarizeRecord(std::string_view payload, RecordSummary* out) {
  *out = RecordSummary();
  CodedInputStream in(reinterpret_cast<const uint8_t*>(payload.data()),
                      static_cast<int>(payload.size()));
  // Field numbers of records.proto's Record.
  bool seen[10] = {};  // sub-message fields 2, 3, 5, 6 and 9 may appear once
  while (uint32_t tag = in.ReadTag()) {
    const int field = WireFormatLite::GetTagFieldNumber(tag);
    const auto type = WireFormatLite::GetTagWireType(tag);
    const bool delimited = type == WireFormatLite::WIRETYPE_LENGTH_DELIMITED;
    const bool varint = type == WireFormatLite::WIRETYPE_VARINT;
    bool ok = true;
    if (delimited && (field == 2 || field == 3 || field == 5 || field == 6 || field == 9)) {
      if (seen[field]) return false;
      seen[field] = true;
    }
    if (field == 1 && varint) {
      ok = in.ReadVarint32(&out->format_version);
    } else if (field == 2 && delimited) {
      ok = ReadBytesView(in, &out->workload);
    } else if (field == 3 && delimited) {
      ok = ReadBytesView(in, &out->target);
    } else if (field == 4 && delimited) {
      // Every occurrence of a string field must be UTF-8, as protobuf's full parse
      // demands, not only the last one that is kept.
      ok = ReadBytesView(in, &out->implementation) && IsValidUtf8(out->implementation);
    } else if (field == 5 && delimited) {
      ok = ReadBytesView(in, &out->config);
    } else if (field == 6 && delimited) {
      ok = ReadBytesView(in, &out->stats);
    } else if (field == 7 && varint) {
      uint32_t status;
      ok = in.ReadVarint32(&status);
      out->status = static_cast<int>(status);
    } else if (field == 8 && delimited) {
      ok = ReadBytesView(in, &out->message) && IsValidUtf8(out->message);
    } else if (field == 9 && delimited) {
      ok = ReadBytesView(in, &out->provenance);
    } else if (field == 10 && varint) {
      uint64_t bytes;
      ok = in.ReadVarint64(&bytes);
      out->workspace_bytes = static_cast<int64_t>(bytes);
    } else if (field == 11 && varint) {
      uint64_t attempt;
      ok = in.ReadVarint64(&attempt);
      out->attempt = static_cast<int32_t>(attempt);
    } else {
      ok = WireFormatLite::SkipField(&in, tag);
    }
    if (!ok) return false;
  }
  return in.ConsumedEntireMessage();
}

}  // namespace opsched::records
