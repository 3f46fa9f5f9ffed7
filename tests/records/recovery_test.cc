// A damaged file header does not lose the records behind it: readers recover them by
// scanning for frames and say so, writers refuse to append until the log is repaired,
// and `records repair` writes a clean log.
#include <gtest/gtest.h>

#include "records/database.h"
#include "records/log_format.h"
#include "records/log_reader.h"
#include "records/log_writer.h"
#include "tests/records/record_factory.h"
#include "tests/test_files.h"
#include "tests/test_util.h"

namespace opsched::records {
namespace {

using namespace ::opsched::testing;  // the helpers of tests/test_files.h

Record Numbered(int seq) {
  Record r = testing::MakeRecord("scatter data=f32[64] indices=i64[8] updates=f32[8] axis=0",
                                 testing::TestGpu(), "scatter_parallel", "block=256", 1.0 + seq);
  r.mutable_provenance()->set_trial_index(seq);
  return r;
}

std::string WriteNumbered(const std::string& name, int count) {
  const std::string path = TempPath(name);
  auto writer = LogWriter::Open(path);
  EXPECT_TRUE(writer.ok()) << writer.status();
  for (int i = 0; i < count; ++i) EXPECT_TRUE((*writer)->Append(Numbered(i)).ok());
  return path;
}

TEST(RecoveryTest, EveryBitFlipInTheHeaderKeepsEveryRecord) {
  const int kRecords = 20;
  const std::string full = ReadBytes(WriteNumbered("header.log", kRecords));
  const std::string path = TempPath("header_flip.log");
  for (size_t bit = 0; bit < kHeaderSize * 8; ++bit) {
    std::string bytes = full;
    bytes[bit / 8] ^= static_cast<char>(1 << (bit % 8));
    WriteBytes(path, bytes);
    LogScan scan;
    std::vector<int> seen;
    OPSCHED_ASSERT_OK(ReadRecords(
        path, [&](const Record& r, uint64_t) { seen.push_back(r.provenance().trial_index()); },
        &scan));
    ASSERT_EQ(seen.size(), static_cast<size_t>(kRecords)) << "bit " << bit;
    for (int i = 0; i < kRecords; ++i) EXPECT_EQ(seen[i], i);
    EXPECT_TRUE(scan.header_damaged) << "bit " << bit;
    ASSERT_EQ(scan.issues.size(), 1u);
    EXPECT_EQ(scan.issues[0].offset, 0u);
    EXPECT_EQ(scan.issues[0].length, kHeaderSize);
    EXPECT_NE(scan.issues[0].what.find("damaged file header"), std::string::npos);
    // The database (dispatch, show, best, compact) sees every record too.
    Database db;
    OPSCHED_ASSERT_OK(db.Load(path));
    EXPECT_EQ(db.size(), static_cast<size_t>(kRecords)) << "bit " << bit;
  }
}

TEST(RecoveryTest, AMissingOrTruncatedHeaderKeepsTheFrames) {
  const std::string full = ReadBytes(WriteNumbered("nohead.log", 5));
  const std::string path = TempPath("nohead_cut.log");
  for (size_t cut : {size_t{1}, size_t{7}, kHeaderSize}) {
    WriteBytes(path, full.substr(cut));
    StatusOr<LogReader> reader = LogReader::Open(path);
    ASSERT_TRUE(reader.ok()) << reader.status();
    EXPECT_TRUE(reader->header_damaged());
    int frames = 0;
    reader->ForEachFrame([&](uint64_t, std::string_view) { ++frames; }, nullptr);
    EXPECT_EQ(frames, 5) << "first " << cut << " bytes cut";
  }
}

TEST(RecoveryTest, AppendingToADamagedLogIsRefusedNamingRepair) {
  const std::string path = WriteNumbered("refuse.log", 3);
  std::string bytes = ReadBytes(path);
  bytes[2] ^= 0x10;
  WriteBytes(path, bytes);
  StatusOr<std::unique_ptr<LogWriter>> writer = LogWriter::Open(path);
  ASSERT_FALSE(writer.ok());
  EXPECT_EQ(writer.status().code(), StatusCode::kFailedPrecondition);
  EXPECT_NE(writer.status().message().find("opsched records repair"), std::string::npos)
      << writer.status();
  EXPECT_EQ(ReadBytes(path), bytes);  // untouched
}

TEST(RecoveryTest, AFileWithoutAnyIntactFrameIsStillNoLog) {
  const std::string path = TempPath("garbage.bin");
  std::string bytes = EncodeHeader();
  bytes[0] = 'X';
  bytes += "some text that is not a frame, and a marker without a frame: OCER....";
  WriteBytes(path, bytes);
  StatusOr<LogReader> reader = LogReader::Open(path);
  ASSERT_FALSE(reader.ok());
  EXPECT_NE(reader.status().message().find("is not an opsched records log"), std::string::npos);
}

}  // namespace
}  // namespace opsched::records
