#include <fcntl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <random>
#include <set>
#include <sstream>

#include <gtest/gtest.h>

#include "records/log_format.h"
#include "records/log_reader.h"
#include "records/log_writer.h"
#include "tests/records/record_factory.h"
#include "tests/test_util.h"

namespace opsched::records {
namespace {

using testing::MakeRecord;
using testing::TestGpu;

std::string TempPath(const std::string& name) {
  const char* dir = std::getenv("TEST_TMPDIR");
  std::string path = std::string(dir ? dir : "/tmp") + "/" + name;
  std::remove(path.c_str());
  return path;
}

std::string ReadFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

void WriteFile(const std::string& path, const std::string& bytes) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out << bytes;
}

Record Numbered(int writer, int seq) {
  Record r = MakeRecord("scatter data=f32[64] indices=i64[8] updates=f32[8] axis=0", TestGpu(),
                        "scatter_parallel", "block=256", 1.0 + seq);
  r.mutable_provenance()->set_session_id("writer" + std::to_string(writer));
  r.mutable_provenance()->set_trial_index(seq);
  return r;
}

std::vector<Record> ReadAll(const std::string& path, LogScan* scan) {
  std::vector<Record> out;
  Status s = ReadRecords(path, [&](const Record& r, uint64_t) { out.push_back(r); }, scan);
  EXPECT_TRUE(s.ok()) << s;
  return out;
}

TEST(LogTest, WriteThenReadEveryRecord) {
  const std::string path = TempPath("basic.log");
  {
    auto writer = LogWriter::Open(path);
    ASSERT_TRUE(writer.ok()) << writer.status();
    for (int i = 0; i < 100; ++i) OPSCHED_ASSERT_OK((*writer)->Append(Numbered(0, i)));
  }
  LogScan scan;
  std::vector<Record> got = ReadAll(path, &scan);
  ASSERT_EQ(got.size(), 100u);
  EXPECT_EQ(scan.intact, 100);
  EXPECT_EQ(scan.skipped, 0);
  EXPECT_EQ(scan.format_version, kFormatVersion);
  for (int i = 0; i < 100; ++i) {
    EXPECT_EQ(got[i].provenance().trial_index(), i);
    EXPECT_EQ(got[i].SerializeAsString(), Numbered(0, i).SerializeAsString());
  }
  // Reopening appends after what is there.
  auto writer = LogWriter::Open(path);
  ASSERT_TRUE(writer.ok());
  OPSCHED_ASSERT_OK((*writer)->Append(Numbered(0, 100)));
  EXPECT_EQ(ReadAll(path, nullptr).size(), 101u);
}

TEST(LogTest, TruncationAtEveryOffsetOfTheLastRecordKeepsTheRest) {
  const std::string path = TempPath("trunc.log");
  {
    auto writer = LogWriter::Open(path);
    ASSERT_TRUE(writer.ok());
    for (int i = 0; i < 5; ++i) OPSCHED_ASSERT_OK((*writer)->Append(Numbered(0, i)));
  }
  const std::string full = ReadFile(path);
  const size_t last_size = kFrameHeaderSize + Numbered(0, 4).ByteSizeLong();
  const size_t last_start = full.size() - last_size;
  const std::string cut_path = TempPath("trunc_cut.log");
  for (size_t cut = last_start; cut < full.size(); ++cut) {
    WriteFile(cut_path, full.substr(0, cut));
    LogScan scan;
    std::vector<Record> got = ReadAll(cut_path, &scan);
    ASSERT_EQ(got.size(), 4u) << "cut at " << cut;
    EXPECT_EQ(scan.skipped, cut > last_start ? 1 : 0) << "cut at " << cut;
    if (cut > last_start) {
      ASSERT_EQ(scan.issues.size(), 1u);
      EXPECT_EQ(scan.issues[0].offset, last_start);
      EXPECT_EQ(scan.issues[0].length, cut - last_start);
    }
    for (int i = 0; i < 4; ++i) EXPECT_EQ(got[i].provenance().trial_index(), i);
    // A writer resuming after the crash appends after the torn bytes; both the old
    // records and the new one are read back.
    {
      auto writer = LogWriter::Open(cut_path);
      ASSERT_TRUE(writer.ok());
      OPSCHED_ASSERT_OK((*writer)->Append(Numbered(1, 99)));
    }
    got = ReadAll(cut_path, nullptr);
    ASSERT_EQ(got.size(), 5u) << "cut at " << cut;
    EXPECT_EQ(got[4].provenance().trial_index(), 99);
  }
}

TEST(LogTest, RandomBitFlipsLoseOnlyTheHitRecord) {
  const std::string path = TempPath("flip.log");
  const int kRecords = 40;
  {
    auto writer = LogWriter::Open(path);
    ASSERT_TRUE(writer.ok());
    for (int i = 0; i < kRecords; ++i) OPSCHED_ASSERT_OK((*writer)->Append(Numbered(0, i)));
  }
  const std::string full = ReadFile(path);
  std::mt19937_64 rng(std::random_device{}());
  const std::string flip_path = TempPath("flip_cut.log");
  for (int trial = 0; trial < 300; ++trial) {
    std::string bytes = full;
    std::uniform_int_distribution<size_t> pos(kHeaderSize, bytes.size() - 1);
    const size_t at = pos(rng);
    bytes[at] ^= static_cast<char>(1 << (rng() % 8));
    WriteFile(flip_path, bytes);
    LogScan scan;
    std::vector<Record> got = ReadAll(flip_path, &scan);
    ASSERT_EQ(got.size(), static_cast<size_t>(kRecords - 1)) << "flip at byte " << at;
    EXPECT_EQ(scan.skipped, 1);
    ASSERT_EQ(scan.issues.size(), 1u);
    EXPECT_LE(scan.issues[0].offset, at);
    EXPECT_GT(scan.issues[0].offset + scan.issues[0].length, at);
    // The survivors are exactly the other records, in order.
    std::set<int> seen;
    for (const Record& r : got) seen.insert(r.provenance().trial_index());
    EXPECT_EQ(seen.size(), got.size());
  }
}

TEST(LogTest, ConcurrentWritersNeverInterleave) {
  const std::string path = TempPath("concurrent.log");
  const int kWriters = 4;
  const int kEach = 1000;
  std::vector<pid_t> children;
  for (int w = 0; w < kWriters; ++w) {
    pid_t pid = fork();
    ASSERT_GE(pid, 0);
    if (pid == 0) {
      auto writer = LogWriter::Open(path);
      if (!writer.ok()) _exit(2);
      for (int i = 0; i < kEach; ++i) {
        if (!(*writer)->Append(Numbered(w, i)).ok()) _exit(3);
      }
      _exit(0);
    }
    children.push_back(pid);
  }
  for (pid_t pid : children) {
    int status = 0;
    ASSERT_EQ(waitpid(pid, &status, 0), pid);
    ASSERT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << status;
  }
  LogScan scan;
  std::vector<Record> got = ReadAll(path, &scan);
  EXPECT_EQ(scan.skipped, 0);
  ASSERT_EQ(got.size(), static_cast<size_t>(kWriters * kEach));
  std::vector<std::vector<int>> per_writer(kWriters);
  for (const Record& r : got) {
    int w = std::stoi(r.provenance().session_id().substr(6));
    ASSERT_EQ(r.SerializeAsString(), Numbered(w, r.provenance().trial_index()).SerializeAsString());
    per_writer[w].push_back(r.provenance().trial_index());
  }
  for (int w = 0; w < kWriters; ++w) {
    ASSERT_EQ(per_writer[w].size(), static_cast<size_t>(kEach));
    for (int i = 0; i < kEach; ++i) EXPECT_EQ(per_writer[w][i], i);  // each writer's order kept
  }
}

TEST(LogTest, NewerFormatVersionIsRefusedOlderIsRead) {
  const std::string path = TempPath("v2.log");
  std::string bytes = EncodeHeader(kFormatVersion + 1) + EncodeFrame(Numbered(0, 0).SerializeAsString());
  WriteFile(path, bytes);
  StatusOr<LogReader> reader = LogReader::Open(path);
  ASSERT_FALSE(reader.ok());
  EXPECT_EQ(reader.status().code(), StatusCode::kFailedPrecondition);
  EXPECT_NE(reader.status().message().find("format version 2; this build reads versions 1 to 1"),
            std::string::npos)
      << reader.status();
  auto writer = LogWriter::Open(path);
  ASSERT_FALSE(writer.ok());
  EXPECT_EQ(ReadFile(path), bytes);  // untouched
  // Every version up to this build's is read.
  for (uint32_t v = 1; v <= kFormatVersion; ++v) {
    WriteFile(path, EncodeHeader(v) + EncodeFrame(Numbered(0, 7).SerializeAsString()));
    LogScan scan;
    EXPECT_EQ(ReadAll(path, &scan).size(), 1u);
    EXPECT_EQ(scan.format_version, v);
  }
}

TEST(LogTest, EmptyAndForeignFiles) {
  const std::string empty = TempPath("empty.log");
  WriteFile(empty, "");
  LogScan scan;
  EXPECT_TRUE(ReadAll(empty, &scan).empty());
  EXPECT_EQ(scan.intact, 0);
  // A writer turns an empty file into a log.
  {
    auto writer = LogWriter::Open(empty);
    ASSERT_TRUE(writer.ok());
    OPSCHED_ASSERT_OK((*writer)->Append(Numbered(0, 1)));
  }
  EXPECT_EQ(ReadAll(empty, nullptr).size(), 1u);

  const std::string foreign = TempPath("notes.txt");
  const std::string text = "these are my notes, not a records log\n";
  WriteFile(foreign, text);
  StatusOr<LogReader> reader = LogReader::Open(foreign);
  ASSERT_FALSE(reader.ok());
  EXPECT_NE(reader.status().message().find("is not an opsched records log"), std::string::npos);
  auto writer = LogWriter::Open(foreign);
  ASSERT_FALSE(writer.ok());
  EXPECT_EQ(ReadFile(foreign), text);  // never appended to

  StatusOr<LogReader> missing = LogReader::Open(TempPath("missing.log"));
  EXPECT_EQ(missing.status().code(), StatusCode::kNotFound);
  EXPECT_FALSE(LogReader::Open(std::getenv("TEST_TMPDIR") ? std::getenv("TEST_TMPDIR") : "/tmp").ok());
}

TEST(LogTest, IntactFrameWithGarbagePayloadIsCountedNotFatal) {
  const std::string path = TempPath("garbage.log");
  WriteFile(path, EncodeHeader() + EncodeFrame("\xff\xff\xff not a proto") +
                      EncodeFrame(Numbered(0, 3).SerializeAsString()));
  LogScan scan;
  std::vector<Record> got = ReadAll(path, &scan);
  ASSERT_EQ(got.size(), 1u);
  EXPECT_EQ(scan.unparsable, 1);
  EXPECT_EQ(scan.intact, 2);
}

}  // namespace
}  // namespace opsched::records
