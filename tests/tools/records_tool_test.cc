#include "tools/records_tool.h"

#include <cstdio>
#include <fstream>
#include <sstream>

#include <gtest/gtest.h>

#include "records/database.h"
#include "records/json.h"
#include "records/log_format.h"
#include "records/log_reader.h"
#include "records/log_writer.h"
#include "tests/records/record_factory.h"
#include "tests/test_util.h"
#include "tests/tools/capture.h"

namespace opsched::tools {
namespace {

using ::opsched::testing::Capture;

using records::testing::MakeRecord;
using records::testing::TestGpu;

const char* kA = "scatter data=f32[64,8] indices=i64[64,8] updates=f32[64,8] axis=0 reduction=add";
const char* kB = "reduce x=f32[128,16,28,28] axes=0,2,3 op=sum keepdims=false";

std::string TempPath(const std::string& name) {
  const char* dir = std::getenv("TEST_TMPDIR");
  std::string path = std::string(dir ? dir : "/tmp") + "/" + name;
  std::remove(path.c_str());
  return path;
}

std::string Slurp(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

std::string WriteLog(const std::string& name, const std::vector<records::Record>& rs) {
  const std::string path = TempPath(name);
  auto writer = records::LogWriter::Open(path);
  EXPECT_TRUE(writer.ok());
  for (const auto& r : rs) EXPECT_TRUE((*writer)->Append(r).ok());
  return path;
}

std::vector<records::Record> Sample() {
  const Target gpu = TestGpu();
  return {
      MakeRecord(kA, gpu, "scatter_parallel", "block=256", 30),
      MakeRecord(kA, gpu, "scatter_parallel", "block=128", 20),
      MakeRecord(kA, gpu, "scatter_sorted", "block=128", 25),
      MakeRecord(kA, gpu, "scatter_sorted", "block=512", 0, records::CRASHED),
      MakeRecord(kA, gpu, "scatter_sorted", "block=512", 0, records::CRASHED),
      MakeRecord(kA, gpu, "scatter_parallel", "block=128", 21),
      MakeRecord(kB, gpu, "reduce_columns", "block=256,split=4", 8),
      MakeRecord(kB, CpuTarget(), "reduce_cpu_parallel", "grain=4096", 900),
  };
}

TEST(RecordsToolTest, ExportImportExportIsByteIdentical) {
  const std::string log = WriteLog("ex.log", Sample());
  auto [code, json] = Capture([&](std::FILE* f) { return RecordsExport(log, f); });
  ASSERT_EQ(code, 0);
  EXPECT_EQ(std::count(json.begin(), json.end(), '\n'), 8);
  const std::string json_path = TempPath("ex.jsonl");
  std::ofstream(json_path) << json;
  const std::string back = TempPath("back.log");
  auto [icode, itext] = Capture([&](std::FILE* f) { return RecordsImport(json_path, back, f); });
  ASSERT_EQ(icode, 0) << itext;
  EXPECT_NE(itext.find("imported 8 records"), std::string::npos);
  auto [code2, json2] = Capture([&](std::FILE* f) { return RecordsExport(back, f); });
  ASSERT_EQ(code2, 0);
  EXPECT_EQ(json2, json);
  EXPECT_EQ(Slurp(back), Slurp(log));  // the logs themselves are identical too
}

TEST(RecordsToolTest, ImportWithABadLineWritesNothing) {
  const std::string log = WriteLog("imp.log", Sample());
  auto [code, json] = Capture([&](std::FILE* f) { return RecordsExport(log, f); });
  ASSERT_EQ(code, 0);
  std::string broken = json;
  broken.insert(json.find('\n') + 1, "{\"implementation\": 5, \"status\": \"NOPE\"}\n");
  const std::string json_path = TempPath("bad.jsonl");
  std::ofstream(json_path) << broken;
  const std::string out = TempPath("imp_out.log");
  auto [icode, itext] = Capture([&](std::FILE* f) { return RecordsImport(json_path, out, f); });
  EXPECT_EQ(icode, 1);
  std::ifstream probe(out);
  EXPECT_FALSE(probe.good());  // not even created
  // A record whose workload hash disagrees with its workload is refused too.
  records::Record lying = Sample()[0];
  lying.mutable_workload()->set_hash(42);
  std::ofstream(json_path) << *records::RecordToJson(lying) << "\n";
  EXPECT_EQ(RecordsImport(json_path, out, stdout), 1);
  EXPECT_EQ(RecordsImport(TempPath("missing.jsonl"), out, stdout), 1);
}

TEST(RecordsToolTest, MergeKeepsEveryDistinctRecordOnce) {
  std::vector<records::Record> all = Sample();
  const std::string a = WriteLog("m_a.log", {all.begin(), all.begin() + 5});
  const std::string b = WriteLog("m_b.log", {all.begin() + 3, all.end()});
  const std::string out = TempPath("m_out.log");
  auto [code, text] = Capture([&](std::FILE* f) { return RecordsMerge({a, b, a}, out, f); });
  ASSERT_EQ(code, 0) << text;
  std::vector<std::string> got;
  OPSCHED_ASSERT_OK(records::ReadRecords(out, [&](const records::Record& r, uint64_t) {
    got.push_back(r.SerializeAsString());
  }));
  // The two identical CRASHED records in Sample() are one distinct record.
  std::set<std::string> distinct;
  for (const auto& r : all) distinct.insert(r.SerializeAsString());
  EXPECT_EQ(got.size(), distinct.size());
  EXPECT_EQ(std::set<std::string>(got.begin(), got.end()), distinct);
  EXPECT_NE(text.find(std::to_string(5 + 5 + 5) + " records"), std::string::npos) << text;
  EXPECT_EQ(RecordsMerge({a, TempPath("missing.log")}, out, stdout), 1);
}

TEST(RecordsToolTest, CompactKeepsBestNPerPairPlusFailures) {
  const std::string log = WriteLog("c.log", Sample());
  const std::string out = TempPath("c_out.log");
  auto [code, text] = Capture([&](std::FILE* f) { return RecordsCompact(log, out, 1, f); });
  ASSERT_EQ(code, 0) << text;
  records::Database db;
  OPSCHED_ASSERT_OK(db.Load(out));
  // kA on the GPU: best (block=128, 20 us) + one CRASHED; kB: one per target.
  ASSERT_EQ(db.size(), 4u);
  auto best = db.Best(*ParseWorkload(kA), TestGpu());
  ASSERT_TRUE(best.has_value());
  EXPECT_FLOAT_EQ(best->entry->median_us, 20);
  int crashed = 0;
  for (const auto& e : db.entries()) crashed += e.status == records::CRASHED;
  EXPECT_EQ(crashed, 1);
  // keep=2 keeps two distinct configs: the repeated block=128 measurement is not one.
  ASSERT_EQ(RecordsCompact(log, out, 2, stdout), 0);
  records::Database db2;
  OPSCHED_ASSERT_OK(db2.Load(out));
  std::set<std::string> configs;
  for (const auto* e : db2.RecordsFor(ParseWorkload(kA)->hash(), TestGpu().fingerprint())) {
    if (e->status == records::OK) {
      configs.insert(db2.implementation(e->implementation) + " " + db2.config(e->config).ToString());
    }
  }
  EXPECT_EQ(configs, (std::set<std::string>{"scatter_parallel block=128", "scatter_sorted block=128"}));
  EXPECT_EQ(RecordsCompact(log, out, 0, stdout), 1);
}

TEST(RecordsToolTest, VerifyShowAndBest) {
  const std::string log = WriteLog("v.log", Sample());
  std::string bytes = Slurp(log);
  bytes.resize(bytes.size() - 5);  // tear the last record
  std::ofstream(log, std::ios::binary | std::ios::trunc) << bytes;
  auto [code, text] = Capture([&](std::FILE* f) { return RecordsVerify(log, f); });
  EXPECT_EQ(code, 0);
  EXPECT_NE(text.find("intact: 7"), std::string::npos) << text;
  EXPECT_NE(text.find("skipped: 1"), std::string::npos) << text;
  EXPECT_NE(text.find("byte offset"), std::string::npos) << text;

  const std::string foreign = TempPath("foreign.txt");
  std::ofstream(foreign) << "hello\n";
  EXPECT_EQ(RecordsVerify(foreign, stdout), 1);
  EXPECT_EQ(RecordsVerify(TempPath("none.log"), stdout), 1);

  auto [scode, shown] = Capture([&](std::FILE* f) {
    return RecordsShow(log, RecordFilter{"scatter", 2}, f);
  });
  EXPECT_EQ(scode, 0);
  EXPECT_NE(shown.find("scatter_parallel"), std::string::npos);
  EXPECT_NE(shown.find("... 4 more"), std::string::npos) << shown;

  auto [bcode, best] = Capture([&](std::FILE* f) { return RecordsBest(log, RecordFilter{}, f); });
  EXPECT_EQ(bcode, 0);
  const std::string scatter_row = best.substr(best.find("scatter data"));
  const std::string row = scatter_row.substr(0, scatter_row.find('\n'));
  EXPECT_NE(row.find("scatter_parallel"), std::string::npos) << best;
  EXPECT_NE(row.find("block=128 "), std::string::npos) << best;
  EXPECT_NE(row.find(" 20.00 "), std::string::npos) << best;
  EXPECT_NE(best.find("reduce_columns"), std::string::npos) << best;
}

}  // namespace
}  // namespace opsched::tools
