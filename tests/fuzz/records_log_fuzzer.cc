// Fuzz target: the records log reader and the database loader.
// The first byte picks the input's form: even, the rest is a log file as it is on disk
// (headers, frames, torn and corrupted bytes); odd, the rest is a list of payloads (a
// 16-bit length, then the bytes) framed with correct checksums, so that mutations reach
// the record decoding and validation behind the frames.
// Properties: no crash, no undefined behaviour, no exception; the database loader keeps
// exactly the records ParseValidRecord accepts (verify and loaders agree); every loaded
// record reads back valid; a repaired log (the valid records, framed anew) reads back
// whole, with an intact header and nothing skipped.
#include <cstdint>
#include <string>
#include <vector>

#include "records/convert.h"
#include "records/database.h"
#include "records/log_reader.h"
#include "records/log_rewrite.h"
#include "records/validate.h"
#include "tests/fuzz/fuzz_check.h"

namespace {

using namespace opsched;
using namespace opsched::records;

std::string LogBytes(const uint8_t* data, size_t size) {
  if (size == 0) return "";
  if (data[0] % 2 == 0) return std::string(reinterpret_cast<const char*>(data + 1), size - 1);
  std::vector<std::string> payloads;
  size_t pos = 1;
  while (pos + 2 <= size) {
    const size_t length = std::min<size_t>(data[pos] | (data[pos + 1] << 8), size - pos - 2);
    payloads.emplace_back(reinterpret_cast<const char*>(data + pos + 2), length);
    pos += 2 + length;
  }
  StatusOr<std::string> log = EncodeLog(payloads);
  return log.ok() ? *log : "";
}

}  // namespace

FUZZ_INITIALIZE_QUIETLY()

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string bytes = LogBytes(data, size);
  StatusOr<LogReader> reader = LogReader::FromBytes("fuzz.log", bytes);
  if (!reader.ok()) return 0;
  std::vector<std::string> valid;
  Record record;
  reader->ForEachFrame(
      [&](uint64_t, std::string_view payload) {
        if (ParseValidRecord(payload, &record).ok()) valid.emplace_back(payload);
      },
      nullptr);

  Database db;
  LogScan scan;
  FUZZ_CHECK(db.Load(*std::move(reader), &scan).ok(), "loading a log that opened");
  FUZZ_CHECK(db.size() == valid.size(), "the loader and ParseValidRecord disagree");
  for (const RecordEntry& e : db.entries()) {
    StatusOr<Record> fetched = db.Fetch(e);
    FUZZ_CHECK(fetched.ok(), "an indexed record does not read back");
    FUZZ_CHECK(ValidateRecord(*fetched).ok(), "an indexed record is not valid");
    (void)db.Best(db.workload(e.workload).hash(), TargetKey::Of(db.target(e.target)), true);
    if (StatusOr<Target> target = FromProto(db.target(e.target)); target.ok()) {
      (void)db.Nearest(db.workload(e.workload), *target, 3, true);
    }
  }

  StatusOr<std::string> repaired = EncodeLog(valid);
  FUZZ_CHECK(repaired.ok(), "framing valid records");
  StatusOr<LogReader> clean = LogReader::FromBytes("repaired.log", *repaired);
  FUZZ_CHECK(clean.ok() && !clean->header_damaged(), "a repaired log does not open cleanly");
  LogScan clean_scan;
  size_t frames = 0;
  clean->ForEachFrame([&](uint64_t, std::string_view) { ++frames; }, &clean_scan);
  FUZZ_CHECK(frames == valid.size() && clean_scan.skipped == 0, "a repaired log lost or skipped records");
  return 0;
}
