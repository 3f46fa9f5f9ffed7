// One set of rules for records (records/validate.h), applied the same way by the
// database loader, import, verify and ReadRecords, whatever the order of the log.
#include <cmath>

#include <gtest/gtest.h>

#include "records/database.h"
#include "records/log_format.h"
#include "records/log_reader.h"
#include "records/log_writer.h"
#include "records/validate.h"
#include "tests/records/record_factory.h"
#include "tests/test_files.h"
#include "tests/test_util.h"

namespace opsched::records {
namespace {

using namespace ::opsched::testing;  // the helpers of tests/test_files.h
using testing::MakeRecord;
using testing::TestGpu;

const char* kLine = "scatter data=f32[64,8] indices=i64[64,8] updates=f32[64,8] axis=0 reduction=add";

Record Good(double us = 20) { return MakeRecord(kLine, TestGpu(), "scatter_parallel", "block=128", us); }

// Records that break one rule each, with the rule's words.
std::vector<std::pair<Record, std::string>> Broken() {
  std::vector<std::pair<Record, std::string>> out;
  auto add = [&](std::function<void(Record&)> edit, std::string why) {
    Record r = Good();
    edit(r);
    out.emplace_back(std::move(r), std::move(why));
  };
  add([](Record& r) { r.clear_stats(); }, "ok record without a measurement");
  add([](Record& r) { r.mutable_stats()->set_median_us(0); }, "ok record without a measurement");
  add([](Record& r) { r.mutable_stats()->set_repeats(0); }, "ok record without a measurement");
  add([](Record& r) { r.mutable_stats()->set_median_us(NAN); }, "median is nan");
  add([](Record& r) { r.mutable_stats()->set_min_us(-1); }, "min is -1");
  add([](Record& r) { r.mutable_stats()->set_max_us(INFINITY); }, "max is inf");
  add([](Record& r) { r.mutable_stats()->set_host_us(-3); }, "host is -3");
  add([](Record& r) { r.mutable_stats()->set_host_us(NAN); }, "host is nan");
  add([](Record& r) { r.mutable_stats()->set_l2_flush("flush"); }, "unknown L2 flush");
  add([](Record& r) { r.mutable_stats()->set_l2_flush("Read"); }, "unknown L2 flush");
  add([](Record& r) { r.mutable_workload()->set_hash(42); }, "stored with hash");
  add([](Record& r) { r.mutable_workload()->set_key("scatter"); }, "stored with key");
  add([](Record& r) { r.mutable_workload()->mutable_tensors(0)->set_dtype("f128"); }, "workload:");
  add([](Record& r) { r.mutable_workload()->mutable_tensors(0)->set_name("da ta"); },
      "does not read back");
  add([](Record& r) { r.mutable_target()->set_fingerprint(7); }, "stored with fingerprint");
  add([](Record& r) { r.mutable_target()->set_kind("tpu"); }, "target:");
  add([](Record& r) { *r.mutable_config()->add_knobs() = r.config().knobs(0); }, "appears twice");
  add([](Record& r) { r.mutable_config()->mutable_knobs(0)->set_s("a,b"); }, "does not read back");
  add([](Record& r) { r.set_implementation(""); }, "implementation name");
  add([](Record& r) { r.set_implementation(std::string("scatter\0x", 9)); }, "implementation name");
  add([](Record& r) { r.set_status(STATUS_UNSPECIFIED); }, "unknown record status");
  add([](Record& r) { r.set_status(static_cast<RecordStatus>(99)); }, "unknown record status");
  add([](Record& r) { r.set_format_version(0); }, "format version 0");
  add([](Record& r) { r.set_format_version(kFormatVersion + 1); }, "format version");
  add([](Record& r) { r.set_workspace_bytes(-1); }, "workspace");
  add([](Record& r) { r.set_attempt(-2); }, "attempt");
  return out;
}

TEST(ValidateTest, EachRuleIsCheckedAndNamed) {
  OPSCHED_EXPECT_OK(ValidateRecord(Good()));
  Record failure = Good();
  failure.set_status(CRASHED);
  failure.clear_stats();
  OPSCHED_EXPECT_OK(ValidateRecord(failure));  // failures carry no measurement
  for (const char* flush : {"", "read", "overwrite", "none"}) {
    Record r = Good();
    r.mutable_stats()->set_l2_flush(flush);
    EXPECT_TRUE(ValidateRecord(r).ok()) << flush << ": " << ValidateRecord(r);
  }
  for (const auto& [record, why] : Broken()) {
    Status s = ValidateRecord(record);
    EXPECT_EQ(s.code(), StatusCode::kInvalidArgument) << why << ": " << s;
    EXPECT_NE(s.message().find(why), std::string::npos) << why << ": " << s;
  }
}

TEST(ValidateTest, TheLoaderAppliesTheSameRulesAndAnOkRecordWithoutStatsNeverWins) {
  for (const auto& [record, why] : Broken()) {
    Database db;
    OPSCHED_ASSERT_OK(db.Add(Good(20)));
    Status added = db.Add(record);
    EXPECT_FALSE(added.ok()) << why;
    const std::string path = TempPath("rules.log");
    {
      auto writer = LogWriter::Open(path);
      ASSERT_TRUE(writer.ok());
      OPSCHED_ASSERT_OK((*writer)->AppendPayload(Good(20).SerializeAsString()));
      OPSCHED_ASSERT_OK((*writer)->AppendPayload(record.SerializeAsString()));
    }
    Database loaded;
    LogScan scan;
    OPSCHED_ASSERT_OK(loaded.Load(path, &scan));
    EXPECT_EQ(loaded.size(), 1u) << why;
    EXPECT_EQ(scan.rejected, 1) << why;
    auto best = loaded.Best(*ParseWorkload(kLine), TestGpu());
    ASSERT_TRUE(best.has_value());
    EXPECT_FLOAT_EQ(best->entry->median_us, 20) << why;
    // ReadRecords (export) sees what the loader sees.
    int read = 0;
    LogScan read_scan;
    OPSCHED_ASSERT_OK(ReadRecords(path, [&](const Record&, uint64_t) { ++read; }, &read_scan));
    EXPECT_EQ(read, 1) << why;
    EXPECT_EQ(read_scan.rejected, 1) << why;
  }
}

TEST(ValidateTest, ARecordIsCheckedWhetherItsHashWasSeenBeforeOrNot) {
  // A record that claims the hash of another workload: rejected whether it comes
  // before or after an honest record of that workload.
  Record honest = Good(20);
  Record lying = MakeRecord("scatter data=f32[8,8] indices=i64[8,8] updates=f32[8,8] axis=0 reduction=add",
                            TestGpu(), "scatter_parallel", "block=128", 1);
  lying.mutable_workload()->set_hash(honest.workload().hash());
  Record lying_target = Good(2);
  lying_target.mutable_target()->set_device_name("NVIDIA H100");  // fingerprint kept: a lie
  for (bool lie_first : {false, true}) {
    for (const Record& liar : {lying, lying_target}) {
      Database db;
      Status first = db.Add(lie_first ? liar : honest);
      Status second = db.Add(lie_first ? honest : liar);
      EXPECT_NE(first.ok(), lie_first);
      EXPECT_NE(second.ok(), !lie_first);
      ASSERT_EQ(db.size(), 1u);
      EXPECT_FLOAT_EQ(db.entries()[0].median_us, 20);
    }
  }
}

TEST(ValidateTest, RepeatedSubMessagesAreRefusedByEveryReader) {
  // Protobuf merges a repeated sub-message; the loader's wire-format skim would see only
  // the last one. Both refuse it.
  Record r = Good();
  std::string payload = r.SerializeAsString();
  WorkloadProto other = r.workload();
  other.mutable_tensors(0)->set_shape(0, 4);
  Record extra;
  *extra.mutable_workload() = other;
  payload += extra.SerializeAsString();
  Record parsed;
  EXPECT_TRUE(parsed.ParseFromString(payload));
  EXPECT_EQ(ParseValidRecord(payload, &parsed).code(), StatusCode::kDataLoss);
  const std::string path = TempPath("repeated.log");
  {
    auto writer = LogWriter::Open(path);
    ASSERT_TRUE(writer.ok());
    OPSCHED_ASSERT_OK((*writer)->AppendPayload(payload));
  }
  Database db;
  LogScan scan;
  OPSCHED_ASSERT_OK(db.Load(path, &scan));
  EXPECT_EQ(db.size(), 0u);
  EXPECT_EQ(scan.unparsable, 1);
}

// Loads a log of `payload` followed by a good record: what the loader kept, and its scan.
struct Loaded {
  size_t records = 0;
  LogScan scan;
};
Loaded LoadBeforeAGoodRecord(const std::string& payload, const std::string& name) {
  const std::string path = TempPath(name);
  std::remove(path.c_str());
  Loaded loaded;
  {
    auto writer = LogWriter::Open(path);
    EXPECT_TRUE(writer.ok()) << writer.status();
    if (!writer.ok()) return loaded;
    EXPECT_TRUE((*writer)->AppendPayload(payload).ok());
    EXPECT_TRUE((*writer)->AppendPayload(Good(7).SerializeAsString()).ok());
  }
  Database db;
  const Status st = db.Load(path, &loaded.scan);
  EXPECT_TRUE(st.ok()) << st;
  loaded.records = db.size();
  return loaded;
}

TEST(ValidateTest, ATagBeyond32BitsIsRefusedByEveryReader) {
  // A fuzzing finding: the loader's wire-format skim read a 9-byte field tag (truncating
  // it to 32 bits) and kept the record, which protobuf's parser — verify, export,
  // repair — refuses.
  const std::string payload = Good().SerializeAsString() + std::string("\xd5\xc3\xf5\xf4\xf5\xf8\x9d\x93\x6f") + "ck_x";
  Record parsed;
  EXPECT_EQ(ParseValidRecord(payload, &parsed).code(), StatusCode::kDataLoss);
  const Loaded loaded = LoadBeforeAGoodRecord(payload, "tag.log");
  EXPECT_EQ(loaded.records, 1u);
  EXPECT_EQ(loaded.scan.unparsable, 1);
}

TEST(ValidateTest, AnEarlierInvalidUtf8OccurrenceOfAStringFieldIsRefusedByEveryReader) {
  // A fuzzing finding (the 10^7-run campaign): a string field written twice, the first
  // time not UTF-8. Protobuf's parser refuses the record; the loader's skim kept only
  // the last occurrence, checked that one and indexed the record.
  for (const char tag : {'\x22', '\x42'}) {  // field 4 (implementation), field 8 (message)
    Record r = Good();
    r.set_message("a valid message");
    const std::string payload = std::string(1, tag) + "\x02\xc3\x28" + r.SerializeAsString();
    Record parsed;
    EXPECT_EQ(ParseValidRecord(payload, &parsed).code(), StatusCode::kDataLoss) << int(tag);
    const Loaded loaded = LoadBeforeAGoodRecord(payload, "utf8-twice.log");
    EXPECT_EQ(loaded.records, 1u) << int(tag);
    EXPECT_EQ(loaded.scan.unparsable, 1) << int(tag);
  }
}

TEST(ValidateTest, InvalidUtf8IsRefusedByEveryReader) {
  for (int field : {4, 8}) {
    Record r = Good();
    if (field == 4) r.set_implementation("scatter_\xff");
    if (field == 8) r.set_message("bad \xc3\x28 text");
    const std::string payload = r.SerializePartialAsString();
    Record parsed;
    EXPECT_FALSE(ParseValidRecord(payload, &parsed).ok()) << field;
    const std::string path = TempPath("utf8.log");
    {
      auto writer = LogWriter::Open(path);
      ASSERT_TRUE(writer.ok());
      OPSCHED_ASSERT_OK((*writer)->AppendPayload(payload));
    }
    Database db;
    OPSCHED_ASSERT_OK(db.Load(path));
    EXPECT_EQ(db.size(), 0u) << field;
  }
}

}  // namespace
}  // namespace opsched::records
