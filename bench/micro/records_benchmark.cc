// Scale of the records database: loading and indexing 1,000,000 records, and Best()
// lookups on an indexed key. Figures go to docs/records.md.
#include <benchmark/benchmark.h>

#include <fstream>
#include <random>
#include <string>

#include "bench/micro/records_corpus.h"
#include "core/log.h"
#include "records/database.h"

namespace opsched::bench {
namespace {

constexpr int kWorkloads = 10000;
constexpr int kConfigs = 100;

const std::string& CorpusPath() {
  static const std::string path = [] {
    const char* dir = std::getenv("TEST_TMPDIR");
    std::string p = std::string(dir ? dir : "/tmp") + "/opsched_records_corpus.log";
    StatusOr<int64_t> n = WriteRecordsCorpus(p, kWorkloads, kConfigs);
    if (!n.ok()) Log().error("writing the corpus: {}", n.status().ToString());
    return p;
  }();
  return path;
}

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

void BM_LoadMillionRecords(benchmark::State& state) {
  const std::string& path = CorpusPath();
  for (auto _ : state) {
    const int64_t before = RssBytes();
    auto db = std::make_unique<records::Database>();
    Status s = db->Load(path);
    if (!s.ok()) state.SkipWithError(std::string(s.message()).c_str());
    state.counters["records"] = static_cast<double>(db->size());
    state.counters["rss_growth_MiB"] = (RssBytes() - before) / double(1 << 20);
    state.PauseTiming();
    db.reset();
    state.ResumeTiming();
  }
}
BENCHMARK(BM_LoadMillionRecords)->Unit(benchmark::kMillisecond)->Iterations(3)->UseRealTime();

void BM_BestOnIndexedKey(benchmark::State& state) {
  static records::Database* db = [] {
    auto* d = new records::Database();
    Status s = d->Load(CorpusPath());
    if (!s.ok()) Log().error("loading: {}", s.ToString());
    return d;
  }();
  std::vector<uint64_t> keys;
  for (int i = 0; i < kWorkloads; ++i) keys.push_back(ParseWorkload(CorpusWorkloadLine(i))->hash());
  std::shuffle(keys.begin(), keys.end(), std::mt19937_64(1));
  Target target;
  target.kind = DeviceKind::kCuda;
  target.device_name = "NVIDIA H200";
  target.arch = "sm_90";
  target.sm_count = 132;
  target.driver_version = 13000;
  target.runtime_version = 13000;
  const records::TargetKey key = records::TargetKey::Of(target);
  size_t i = 0;
  int64_t found = 0;
  for (auto _ : state) {
    auto m = db->Best(keys[i++ % keys.size()], key);
    found += m.has_value();
    benchmark::DoNotOptimize(m);
  }
  if (found != state.iterations()) state.SkipWithError("a lookup missed");
}
BENCHMARK(BM_BestOnIndexedKey);

}  // namespace
}  // namespace opsched::bench

BENCHMARK_MAIN();
