// Loads a 1,000,000-record log and checks every lookup and the memory it costs. The
// timing figures come from //bench/micro:records_benchmark; this test guards
// correctness and the memory bound.
#include <chrono>
#include <fstream>

#include <gtest/gtest.h>

#include "bench/micro/records_corpus.h"
#include "records/database.h"
#include "tests/test_util.h"

namespace opsched::records {
namespace {

int64_t RssBytes() {
  std::ifstream in("/proc/self/status");
  std::string key;
  while (in >> key) {
    if (key == "VmRSS:") {
      int64_t kb;
      in >> kb;
      return kb * 1024;
    }
  }
  return 0;
}

TEST(ScaleTest, MillionRecordsLoadAndAnswerCorrectly) {
  const char* dir = std::getenv("TEST_TMPDIR");
  const std::string path = std::string(dir ? dir : "/tmp") + "/million.log";
  constexpr int kWorkloads = 10000, kConfigs = 100;
  StatusOr<int64_t> written = bench::WriteRecordsCorpus(path, kWorkloads, kConfigs);
  ASSERT_TRUE(written.ok()) << written.status();
  ASSERT_EQ(*written, 1000000);

  const int64_t rss_before = RssBytes();
  const auto start = std::chrono::steady_clock::now();
  Database db;
  LogScan scan;
  OPSCHED_ASSERT_OK(db.Load(path, &scan));
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  const double rss_mib = (RssBytes() - rss_before) / double(1 << 20);
  std::printf("loaded %zu records in %.3f s, RSS +%.1f MiB\n", db.size(), seconds, rss_mib);
  EXPECT_EQ(db.size(), 1000000u);
  EXPECT_EQ(scan.skipped, 0);
  EXPECT_EQ(db.workload_count(), static_cast<size_t>(kWorkloads));
  EXPECT_LT(rss_mib, 1024.0);
  // A gross-regression guard only: the 2 s figure is measured by the benchmark, not on
  // shared CI machines.
  EXPECT_LT(seconds, 20.0);

  Target target;
  target.kind = DeviceKind::kCuda;
  target.device_name = "NVIDIA H200";
  target.arch = "sm_90";
  target.sm_count = 132;
  target.driver_version = 13000;
  target.runtime_version = 13000;
  const TargetKey key = TargetKey::Of(target);
  for (int i = 0; i < kWorkloads; i += 97) {
    const uint64_t h = ParseWorkload(bench::CorpusWorkloadLine(i))->hash();
    std::optional<Match> best = db.Best(h, key);
    ASSERT_TRUE(best.has_value()) << i;
    // The corpus's fastest ok config of workload i is the minimum over its configs.
    float expected = 1e30f;
    for (const RecordEntry* e : db.RecordsFor(h, key.fingerprint)) {
      if (e->status == OK) expected = std::min(expected, e->median_us);
    }
    EXPECT_EQ(best->entry->median_us, expected);
    EXPECT_EQ(db.RecordsFor(h, key.fingerprint).size(), static_cast<size_t>(kConfigs));
  }
}

}  // namespace
}  // namespace opsched::records
