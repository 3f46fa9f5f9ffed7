// Fuzz target: `records import`'s reading of JSON lines (protobuf's JSON mapping) and the
// validation it applies.
// Properties: no crash, no undefined behaviour, no exception; a record import accepts is
// accepted by every reader of the log it would be written to (its serialization passes
// ParseValidRecord and Database::Add); accepted records export and import back to the
// same record.
#include <cstdint>
#include <sstream>
#include <string>

#include "records/database.h"
#include "records/json.h"
#include "records/validate.h"
#include "tests/fuzz/fuzz_check.h"

FUZZ_INITIALIZE_QUIETLY()

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace opsched::records;
  std::istringstream in(std::string(reinterpret_cast<const char*>(data), size));
  std::string line;
  while (std::getline(in, line)) {
    opsched::StatusOr<Record> record = RecordFromJson(line);
    if (!record.ok() || !ValidateRecord(*record).ok()) continue;
    const std::string payload = record->SerializeAsString();
    Record parsed;
    FUZZ_CHECK(ParseValidRecord(payload, &parsed).ok(), "import accepts what readers reject");
    Database db;
    FUZZ_CHECK(db.Add(*record).ok(), "import accepts what the database rejects");
    opsched::StatusOr<std::string> json = RecordToJson(*record);
    FUZZ_CHECK(json.ok(), "an accepted record does not print as JSON");
    opsched::StatusOr<Record> back = RecordFromJson(*json);
    FUZZ_CHECK(back.ok() && back->SerializeAsString() == payload, "export then import changes a record");
  }
  return 0;
}
