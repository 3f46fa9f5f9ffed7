#include "records/json.h"

#include <google/protobuf/util/json_util.h>

#include "core/format.h"

namespace opsched::records {

StatusOr<std::string> RecordToJson(const Record& record) {
  google::protobuf::util::JsonPrintOptions options;
  options.preserve_proto_field_names = true;
  options.add_whitespace = false;
  std::string out;
  auto status = google::protobuf::util::MessageToJsonString(record, &out, options);
  if (!status.ok()) {
    return absl::InternalError(fmt::format("record to JSON: {}", status.ToString()));
  }
  return out;
}

StatusOr<Record> RecordFromJson(std::string_view json) {
  google::protobuf::util::JsonParseOptions options;
  options.ignore_unknown_fields = false;
  Record record;
  auto status = google::protobuf::util::JsonStringToMessage(
      google::protobuf::StringPiece(json.data(), json.size()), &record, options);
  if (!status.ok()) {
    return absl::InvalidArgumentError(fmt::format("bad record JSON: {}", status.ToString()));
  }
  return record;
}

}  // namespace opsched::records
