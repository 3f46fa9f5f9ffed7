// Records as JSON, one object per line, through protobuf's JSON mapping (field names as
// in records.proto). Printing is deterministic, so export -> import -> export gives the
// same bytes.
#pragma once

#include <string>
#include <string_view>

#include "core/status.h"
#include "records/records.pb.h"

namespace opsched::records {

StatusOr<std::string> RecordToJson(const Record& record);
StatusOr<Record> RecordFromJson(std::string_view json);

}  // namespace opsched::records
