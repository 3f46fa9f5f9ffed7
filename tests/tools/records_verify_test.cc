// verify, repair, import and compact apply the rules of records/validate.h and the retry
// rules of records/attempts.h the way the loader does.
#include <cstdio>

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
#include "tests/tools/capture.h"
#include "tools/records_tool.h"

namespace opsched::tools {
namespace {

using namespace ::opsched::testing;  // tests/test_files.h, tests/tools/capture.h
using records::testing::MakeRecord;
using records::testing::TestGpu;

const char* kA = "scatter data=f32[64,8] indices=i64[64,8] updates=f32[64,8] axis=0 reduction=add";

std::string WriteLog(const std::string& name, const std::vector<records::Record>& rs) {
  const std::string path = TempPath(name);
  auto writer = records::LogWriter::Open(path);
  EXPECT_TRUE(writer.ok());
  for (const auto& r : rs) EXPECT_TRUE((*writer)->AppendPayload(r.SerializeAsString()).ok());
  return path;
}

records::Record WithAttempt(records::Record r, int attempt) {
  r.set_attempt(attempt);
  return r;
}

TEST(RecordsVerifyTest, VerifyCountsExactlyWhatLoadersAccept) {
  records::Record no_stats = MakeRecord(kA, TestGpu(), "scatter_sorted", "block=64", 5);
  no_stats.clear_stats();
  records::Record lying = MakeRecord(kA, TestGpu(), "scatter_sorted", "block=32", 5);
  lying.mutable_workload()->mutable_tensors(0)->set_shape(0, 65);
  const std::string log =
      WriteLog("verify.log", {MakeRecord(kA, TestGpu(), "scatter_parallel", "block=128", 20), no_stats,
                              MakeRecord(kA, TestGpu(), "scatter_parallel", "block=256", 30), lying});
  auto [code, text] = Capture([&](std::FILE* f) { return RecordsVerify(log, f); });
  EXPECT_EQ(code, 0);
  EXPECT_NE(text.find("intact: 2\n"), std::string::npos) << text;
  EXPECT_NE(text.find("rejected: 2\n"), std::string::npos) << text;
  EXPECT_NE(text.find("ok record without a measurement"), std::string::npos) << text;
  EXPECT_NE(text.find("stored with key"), std::string::npos) << text;
  records::Database db;
  OPSCHED_ASSERT_OK(db.Load(log));
  EXPECT_EQ(db.size(), 2u);
}

TEST(RecordsVerifyTest, ImportRefusesWhatTheLoaderWouldRefuse) {
  records::Record no_stats = MakeRecord(kA, TestGpu(), "scatter_sorted", "block=64", 5);
  no_stats.clear_stats();
  const std::string json = TempPath("nostats.jsonl");
  WriteBytes(json, *records::RecordToJson(MakeRecord(kA, TestGpu(), "scatter_parallel", "block=128", 20)) +
                       "\n" + *records::RecordToJson(no_stats) + "\n");
  const std::string out = TempPath("nostats.log");
  EXPECT_EQ(RecordsImport(json, out, stdout), 1);
  EXPECT_FALSE(std::ifstream(out).good());
  // A directory is no JSON-lines file.
  EXPECT_EQ(RecordsImport(TempDir(), out, stdout), 1);
}

TEST(RecordsVerifyTest, ADamagedHeaderIsReportedAndRepairedInPlace) {
  const std::string log = WriteLog("damaged.log", {MakeRecord(kA, TestGpu(), "scatter_parallel", "block=128", 20),
                                                   MakeRecord(kA, TestGpu(), "scatter_sorted", "block=64", 25)});
  const std::string clean = ReadBytes(log);
  std::string bytes = clean;
  bytes[9] ^= 0x01;  // the format version
  // and a torn record at the end
  bytes += records::EncodeFrame(MakeRecord(kA, CpuTarget(), "scatter_cpu", "-", 9).SerializeAsString()).substr(0, 30);
  WriteBytes(log, bytes);
  auto [code, text] = Capture([&](std::FILE* f) { return RecordsVerify(log, f); });
  EXPECT_EQ(code, 0);
  EXPECT_NE(text.find("header is damaged"), std::string::npos) << text;
  EXPECT_NE(text.find("records repair"), std::string::npos) << text;
  EXPECT_NE(text.find("intact: 2\n"), std::string::npos) << text;
  auto [rcode, rtext] = Capture([&](std::FILE* f) { return RecordsRepair(log, log, f); });
  ASSERT_EQ(rcode, 0) << rtext;
  EXPECT_NE(rtext.find("header damaged (rewritten), 2 records kept"), std::string::npos) << rtext;
  EXPECT_EQ(ReadBytes(log), clean);  // exactly the log before the damage
  auto writer = records::LogWriter::Open(log);
  EXPECT_TRUE(writer.ok()) << writer.status();
}

TEST(RecordsVerifyTest, CompactDropsTransientFailuresAndKeepsFinalOnes) {
  const Target gpu = TestGpu();
  auto failed = [&](const char* config, records::RecordStatus status, int attempt) {
    return WithAttempt(MakeRecord(kA, gpu, "scatter_sorted", config, 0, status), attempt);
  };
  const std::string log = WriteLog(
      "retry.log",
      {
          failed("block=32", records::TIMEOUT, 0),       // retried and then ok: transient
          MakeRecord(kA, gpu, "scatter_sorted", "block=32", 40),
          failed("block=64", records::CRASHED, 1),       // pending retry: kept
          failed("block=128", records::TIMEOUT, 1),      // retried, failed again: final
          failed("block=128", records::TIMEOUT, 2),
          failed("block=256", records::WRONG_RESULT, 0),  // final at once
          failed("block=256", records::WRONG_RESULT, 0),
          MakeRecord(kA, gpu, "scatter_parallel", "block=128", 20),
      });
  const std::string out = TempPath("retry_out.log");
  ASSERT_EQ(RecordsCompact(log, out, 3, stdout), 0);
  std::vector<std::string> kept;
  OPSCHED_ASSERT_OK(records::ReadRecords(out, [&](const records::Record& r, uint64_t) {
    kept.push_back(fmt::format("{} {} {}", r.config().knobs(0).i(), records::StatusName(r.status()),
                               r.attempt()));
  }));
  EXPECT_EQ(kept, (std::vector<std::string>{"32 ok 0", "64 crashed 1", "128 timeout 2",
                                            "256 wrong_result 0", "128 ok 0"}));
}

}  // namespace
}  // namespace opsched::tools
