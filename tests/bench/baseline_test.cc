// Baselines are checked when read and replaced atomically when written: an interrupted
// --update-baseline (here: a full disk) leaves the old baseline whole.
#include <gtest/gtest.h>

#include "bench/lib/baseline.h"
#include "tests/test_files.h"
#include "tests/test_util.h"

namespace opsched::bench {
namespace {

using namespace ::opsched::testing;  // the helpers of tests/test_files.h

BenchReport Report(int entries, double us) {
  BenchReport r;
  for (int i = 0; i < entries; ++i) {
    BenchEntry* e = r.add_entries();
    e->set_workload("reduce x=f32[" + std::to_string(i + 1) + "] axes=0 op=sum keepdims=false");
    e->set_verdict("new");
    e->mutable_tuned()->set_implementation("reduce_cpu_sequential");
    e->mutable_tuned()->set_median_us(us);
    e->mutable_tuned()->set_ci_low_us(us * 0.9);
    e->mutable_tuned()->set_ci_high_us(us * 1.1);
  }
  return r;
}

TEST(BaselineTest, AnInterruptedUpdateLeavesTheOldBaseline) {
  const std::string path = TempPath("device.json");
  OPSCHED_ASSERT_OK(WriteBaseline(Report(50, 7), path));
  const std::string before = ReadBytes(path);
  // Another suite's update, interrupted by a full disk half way.
  BenchReport other = Report(80, 9);
  other.mutable_entries()->DeleteSubrange(0, 50);
  const int code = RunWithFileSizeLimit(before.size() + 100, [&] {
    return WriteBaseline(other, path).ok() ? 0 : 1;
  });
  EXPECT_EQ(code, 1);
  EXPECT_EQ(ReadBytes(path), before);
  StatusOr<Baseline> b = LoadBaseline(path);
  ASSERT_TRUE(b.ok()) << b.status();
  EXPECT_EQ(b->entries_size(), 50);  // other suites' entries are all there
  EXPECT_TRUE(FilesStartingWith(TempDir(), "device.json.tmp").empty());
}

TEST(BaselineTest, EntriesThatCannotBeJudgedAreRefused) {
  const std::string ok = R"({"entries": [{"workload": "reduce x=f32[4] axes=0", "median_us": 3.5}]})";
  StatusOr<Baseline> parsed = ParseBaseline(ok, "ok.json");
  ASSERT_TRUE(parsed.ok()) << parsed.status();
  const std::vector<std::pair<std::string, std::string>> bad = {
      {R"({"entries": [{"workload": "w", "median_us": "NaN"}]})", "median nan"},
      {R"({"entries": [{"workload": "w", "median_us": -1}]})", "median -1"},
      {R"({"entries": [{"workload": "w", "median_us": 0}]})", "median 0"},
      {R"({"entries": [{"workload": "w", "median_us": 1, "ci_low_us": "Infinity"}]})", "bounds inf"},
      {R"({"entries": [{"median_us": 1}]})", "no printable workload"},
      {R"({"entries": [{"workload": "w", "median_us": 1}, {"workload": "w", "median_us": 2}]})", "repeats"},
      {R"({"entries": [)", "bad baseline"},
      {R"({"entries": [{"workload": "w", "median_us": 1, "l2_flush": "fill"}]})", "unknown L2 flush"},
  };
  for (const auto& [json, why] : bad) {
    StatusOr<Baseline> b = ParseBaseline(json, "b.json");
    ASSERT_FALSE(b.ok()) << json;
    EXPECT_NE(b.status().message().find(why), std::string::npos) << b.status();
  }
  EXPECT_EQ(LoadBaseline(TempDir()).status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(LoadBaseline(TempPath("none.json")).status().code(), StatusCode::kNotFound);
}

// Each entry keeps the L2 flush of the run that measured it; entries written before
// baselines kept it were measured with the overwrite on a GPU, and with none on a CPU.
TEST(BaselineTest, EntriesSayWhichL2FlushMeasuredThem) {
  const std::string path = TempPath("flush.json");
  BenchReport report = Report(2, 5);
  report.set_l2_flush("read");
  OPSCHED_ASSERT_OK(WriteBaseline(report, path));
  StatusOr<Baseline> b = LoadBaseline(path);
  ASSERT_TRUE(b.ok()) << b.status();
  Target gpu;
  gpu.kind = DeviceKind::kCuda;
  for (const BaselineEntry& e : b->entries()) EXPECT_EQ(BaselineFlush(e, gpu), "read");
  BaselineEntry old;
  EXPECT_EQ(BaselineFlush(old, gpu), "overwrite");
  EXPECT_EQ(BaselineFlush(old, Target{}), "");
}

}  // namespace
}  // namespace opsched::bench
