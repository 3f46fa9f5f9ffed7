// Commands that write a log (merge, compact, import, repair) coordinate with appenders
// and write atomically: an in-place rewrite during a tune loses no record, a full disk
// leaves the log as it was and no temporary file behind.
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <set>
#include <thread>

#include <gtest/gtest.h>

#include "core/format.h"
#include "records/database.h"
#include "records/json.h"
#include "records/log_format.h"
#include "records/log_reader.h"
#include "records/log_writer.h"
#include "tests/records/record_factory.h"
#include "tests/test_files.h"
#include "tests/test_util.h"
#include "tools/records_tool.h"

namespace opsched::tools {
namespace {

using namespace ::opsched::testing;  // the helpers of tests/test_files.h
using records::testing::MakeRecord;
using records::testing::TestGpu;

// One record per workload, numbered by its index size.
records::Record Numbered(int i) {
  records::Record r = MakeRecord(
      fmt::format("scatter data=f32[64] indices=i64[{0}] updates=f32[{0}] axis=0", i + 1),
      TestGpu(), "scatter_parallel", "block=256", 10 + i);
  r.mutable_provenance()->set_trial_index(i);
  return r;
}

std::set<int> TrialIndices(const std::string& path) {
  std::set<int> out;
  EXPECT_TRUE(records::ReadRecords(path, [&](const records::Record& r, uint64_t) {
                out.insert(r.provenance().trial_index());
              }).ok());
  return out;
}

TEST(RecordsRewriteTest, InPlaceCompactAndMergeDuringAppendsLoseNothing) {
  const std::string log = TempPath("busy.log");
  const int kRecords = 300;
  {
    auto writer = records::LogWriter::Open(log);
    ASSERT_TRUE(writer.ok());
    OPSCHED_ASSERT_OK((*writer)->Append(Numbered(0)));
  }
  std::fflush(nullptr);
  const pid_t tuner = fork();
  ASSERT_GE(tuner, 0);
  if (tuner == 0) {
    // A tune: one writer opened once, appending as it measures.
    auto writer = records::LogWriter::Open(log);
    if (!writer.ok()) _exit(2);
    for (int i = 1; i < kRecords; ++i) {
      if (!(*writer)->Append(Numbered(i)).ok()) _exit(3);
      std::this_thread::sleep_for(std::chrono::microseconds(300));
    }
    _exit(0);
  }
  std::FILE* quiet = std::fopen("/dev/null", "w");
  int rewrites = 0, status = 0;
  while (waitpid(tuner, &status, WNOHANG) == 0) {
    EXPECT_EQ(RecordsCompact(log, log, 3, quiet), 0);
    EXPECT_EQ(RecordsMerge({log}, log, quiet), 0);
    rewrites += 2;
    // flock is not fair: rewrites back to back with no gap could keep an appender,
    // always one replaced file behind, waiting (real rewrites are commands, far apart).
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
  }
  std::fclose(quiet);
  ASSERT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << status;
  EXPECT_GT(rewrites, 4);
  const std::set<int> got = TrialIndices(log);
  EXPECT_EQ(got.size(), static_cast<size_t>(kRecords)) << "after " << rewrites << " rewrites";
  EXPECT_TRUE(FilesStartingWith(TempDir(), "busy.log.tmp").empty());
}

TEST(RecordsRewriteTest, ImportOnAFullDiskWritesNothing) {
  const std::string log = TempPath("full.log");
  {
    auto writer = records::LogWriter::Open(log);
    ASSERT_TRUE(writer.ok());
    for (int i = 0; i < 3; ++i) OPSCHED_ASSERT_OK((*writer)->Append(Numbered(i)));
  }
  const std::string before = ReadBytes(log);
  const std::string json = TempPath("full.jsonl");
  {
    std::string lines;
    for (int i = 3; i < 60; ++i) lines += *records::RecordToJson(Numbered(i)) + "\n";
    WriteBytes(json, lines);
  }
  const int code = RunWithFileSizeLimit(before.size() + 500, [&] {
    std::FILE* quiet = std::fopen("/dev/null", "w");
    return RecordsImport(json, log, quiet);
  });
  EXPECT_EQ(code, 1);
  EXPECT_EQ(ReadBytes(log), before);  // all or nothing
  EXPECT_TRUE(FilesStartingWith(TempDir(), "full.log.tmp").empty());
  // With room, everything arrives.
  EXPECT_EQ(RecordsImport(json, log, stdout), 0);
  EXPECT_EQ(TrialIndices(log).size(), 60u);
}

TEST(RecordsRewriteTest, AFailedMergeOrCompactLeavesNoTemporaryFile) {
  const std::string log = TempPath("src.log");
  {
    auto writer = records::LogWriter::Open(log);
    ASSERT_TRUE(writer.ok());
    for (int i = 0; i < 40; ++i) OPSCHED_ASSERT_OK((*writer)->Append(Numbered(i)));
  }
  const std::string out = TempPath("dst.log");
  EXPECT_EQ(RunWithFileSizeLimit(1000, [&] { return RecordsMerge({log}, out, stdout); }), 1);
  EXPECT_EQ(RunWithFileSizeLimit(1000, [&] { return RecordsCompact(log, out, 3, stdout); }), 1);
  EXPECT_EQ(RunWithFileSizeLimit(1000, [&] { return RecordsRepair(log, out, stdout); }), 1);
  EXPECT_TRUE(FilesStartingWith(TempDir(), "dst.log").empty());  // neither OUT nor OUT.tmp.*
  // An existing output stays as it was.
  WriteBytes(out, ReadBytes(log));
  EXPECT_EQ(RunWithFileSizeLimit(1000, [&] { return RecordsCompact(log, out, 3, stdout); }), 1);
  EXPECT_EQ(ReadBytes(out), ReadBytes(log));
  EXPECT_EQ(FilesStartingWith(TempDir(), "dst.log").size(), 1u);
}

TEST(RecordsRewriteTest, AnOutputThatIsNotALogIsRefusedAndKept) {
  const std::string log = TempPath("in.log");
  {
    auto writer = records::LogWriter::Open(log);
    ASSERT_TRUE(writer.ok());
    for (int i = 0; i < 5; ++i) OPSCHED_ASSERT_OK((*writer)->Append(Numbered(i)));
  }
  const std::string notes = TempPath("notes.txt");
  const std::string text = "my notes, not a records log\n";
  WriteBytes(notes, text);
  EXPECT_EQ(RecordsMerge({log}, notes, stdout), 1);
  EXPECT_EQ(RecordsCompact(log, notes, 3, stdout), 1);
  EXPECT_EQ(RecordsRepair(log, notes, stdout), 1);
  EXPECT_EQ(ReadBytes(notes), text);
  // A log of a newer format version: its records are not ours to drop.
  const std::string newer = records::EncodeHeader(records::kFormatVersion + 1) + ReadBytes(log).substr(16);
  const std::string future = TempPath("future.log");
  WriteBytes(future, newer);
  EXPECT_EQ(RecordsMerge({log}, future, stdout), 1);
  EXPECT_EQ(ReadBytes(future), newer);
  // An empty file, or a log, is replaced.
  const std::string empty = TempPath("empty.log");
  WriteBytes(empty, "");
  EXPECT_EQ(RecordsMerge({log}, empty, stdout), 0);
  EXPECT_EQ(RecordsCompact(log, log, 3, stdout), 0);
}

}  // namespace
}  // namespace opsched::tools
