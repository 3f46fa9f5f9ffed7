#include "strategies/dispatcher.h"

#include <thread>

#include <gtest/gtest.h>

#include "tests/log_capture.h"
#include "tests/records/record_factory.h"
#include "tests/strategies/test_op.h"
#include "tests/test_util.h"

namespace opsched {
namespace {

using records::testing::MakeRecord;

std::string Line(int64_t n) { return fmt::format("scale x=f32[{}] factor=2.0", n); }

class DispatcherTest : public ::testing::Test {
 protected:
  DispatcherTest() { testing::RegisterScaleOp(&registry_, &runs_); }

  Workload W(int64_t n) { return *registry_.ParseCanonical(Line(n)); }
  void AddRecord(int64_t n, const Target& t, const std::string& impl, const std::string& config,
                 double us, records::RecordStatus status = records::OK) {
    OPSCHED_ASSERT_OK(db_.Add(MakeRecord(Line(n), t, impl, config, us, status)));
  }
  Dispatcher Make(DispatchOptions options = {}) {
    return Dispatcher(registry_, cpu_, &db_, options);
  }
  const Decision& D(Dispatcher& d, int64_t n) {
    StatusOr<const CachedDecision*> got = d.Decide(W(n));
    EXPECT_TRUE(got.ok()) << got.status();
    return (*got)->decision;
  }

  Registry registry_;
  testing::ScaleRuns runs_;
  records::Database db_;
  const Target cpu_ = CpuTarget();
};

TEST_F(DispatcherTest, RegistryListsAndRefusesDuplicates) {
  EXPECT_NE(registry_.FindOp("scale"), nullptr);
  EXPECT_NE(registry_.FindStrategy("scale"), nullptr);
  std::vector<std::string> names;
  for (const Implementation* i : registry_.ImplementationsOf("scale")) names.emplace_back(i->name());
  EXPECT_EQ(names, (std::vector<std::string>{"scale_cpu_blocked", "scale_cpu_loop", "scale_cuda"}));
  testing::ScaleRuns other;
  Registry again;
  testing::RegisterScaleOp(&again, &other);
  const Status twice = again.AddStrategy(std::make_unique<Strategy>("scale", std::vector<StrategyRule>{}));
  EXPECT_EQ(twice.code(), StatusCode::kAlreadyExists);
  EXPECT_EQ(twice.message(), "op 'scale' has two strategies");
  EXPECT_NE(again.FindStrategy("scale"), nullptr);  // the first one stays
  EXPECT_EQ(registry_.FindImplementation("nope"), nullptr);
  EXPECT_FALSE(registry_.ParseCanonical("nosuchop x=f32[4]").ok());
  EXPECT_NE(registry_.ParseCanonical("scale x=f32[4]")->FindAttr("factor"), nullptr);
}

TEST_F(DispatcherTest, StrategyRulesOrderTheHeuristic) {
  Dispatcher d = Make();
  // Small: only the loop rule holds; its default unroll=8 is outside the space {1,2,4},
  // so the closest legal config is used: unroll=4, half a step from 8 (not the first).
  const Decision& small = D(d, 100);
  EXPECT_EQ(small.implementation->name(), "scale_cpu_loop");
  EXPECT_EQ(small.config.ToString(), "unroll=4");
  EXPECT_EQ(small.provenance, Provenance::kHeuristic);
  EXPECT_NE(small.reason.find("strategy rule 'always'"), std::string::npos);
  // Large: the priority-20 rule wins.
  const Decision& large = D(d, 8192);
  EXPECT_EQ(large.implementation->name(), "scale_cpu_blocked");
  EXPECT_EQ(large.config.ToString(), "block=1024");
  EXPECT_EQ(large.workspace_bytes, 4096u);
  // n >= 4096 but not applicable (not a multiple of 64): the next rule.
  EXPECT_EQ(D(d, 4097).implementation->name(), "scale_cpu_loop");
  // Deterministic dispatch never picks the non-deterministic implementation.
  Dispatcher det = Make(DispatchOptions{.deterministic = true});
  EXPECT_EQ(D(det, 8192).implementation->name(), "scale_cpu_loop");
}

TEST_F(DispatcherTest, ExactRecordBeatsHeuristic) {
  AddRecord(8192, cpu_, "scale_cpu_loop", "unroll=2", 5.0);
  AddRecord(8192, cpu_, "scale_cpu_blocked", "block=256", 7.0);
  AddRecord(8192, cpu_, "scale_cpu_blocked", "block=64", 1.0, records::WRONG_RESULT);
  Dispatcher d = Make();
  const Decision& got = D(d, 8192);
  EXPECT_EQ(got.provenance, Provenance::kExactRecord);
  EXPECT_EQ(got.implementation->name(), "scale_cpu_loop");
  EXPECT_EQ(got.config.ToString(), "unroll=2");
  EXPECT_DOUBLE_EQ(got.measured_us, 5.0);
  EXPECT_NE(got.reason.find("5.00 us"), std::string::npos) << got.reason;
}

TEST_F(DispatcherTest, TransferredRecordOnlyWhenAllowed) {
  Target other_cpu = cpu_;
  other_cpu.device_name = "Another CPU of the same arch";
  Target other_arch = cpu_;
  other_arch.arch = "riscv64";
  AddRecord(8192, other_cpu, "scale_cpu_loop", "unroll=4", 3.0);
  AddRecord(8192, other_arch, "scale_cpu_loop", "unroll=2", 1.0);
  Dispatcher strict = Make();
  EXPECT_EQ(D(strict, 8192).provenance, Provenance::kHeuristic);
  Dispatcher transfer = Make(DispatchOptions{.allow_transferred_records = true});
  const Decision& got = D(transfer, 8192);
  EXPECT_EQ(got.provenance, Provenance::kTransferredRecord);
  EXPECT_EQ(got.config.ToString(), "unroll=4");  // never the other arch's record
  EXPECT_NE(got.reason.find("Another CPU"), std::string::npos);
}

TEST_F(DispatcherTest, AnOwnKernelsRecordFromAnotherCudnnIsExact) {
  const Target shell = records::testing::TestGpu("NVIDIA H100 80GB HBM3", "sm_90", 91400);
  Target torch_process = shell;  // PyTorch loaded its own cuDNN
  torch_process.cudnn_version = 91900;
  AddRecord(8192, shell, "scale_cuda", "-", 3.0);
  // Matched by fingerprint only, the record is another target's.
  Dispatcher strict(registry_, torch_process, &db_, {});
  EXPECT_EQ(D(strict, 8192).provenance, Provenance::kHeuristic);
  // Told which libraries each implementation calls (scale_cuda: neither), the record holds.
  records::Database db;
  db.SetLibraryUse([this](std::string_view name) { return registry_.LibraryUseOf(name); });
  OPSCHED_ASSERT_OK(db.Add(MakeRecord(Line(8192), shell, "scale_cuda", "-", 3.0)));
  Dispatcher aware(registry_, torch_process, &db, {});
  const Decision& got = D(aware, 8192);
  EXPECT_EQ(got.provenance, Provenance::kExactRecord);
  EXPECT_EQ(got.implementation->name(), "scale_cuda");
  EXPECT_NE(got.reason.find("measured with cuDNN 91400, which this implementation does not call"), std::string::npos)
      << got.reason;
  // Another driver is another platform: no record holds.
  Target other_driver = torch_process;
  other_driver.driver_version += 10;
  Dispatcher elsewhere(registry_, other_driver, &db, {});
  EXPECT_EQ(D(elsewhere, 8192).provenance, Provenance::kHeuristic);
}

TEST_F(DispatcherTest, NearestRecordCarriesALegalConfig) {
  AddRecord(4096, cpu_, "scale_cpu_blocked", "block=1024", 2.0);
  AddRecord(16384, cpu_, "scale_cpu_loop", "unroll=4", 9.0);
  Dispatcher d = Make();
  // 8192 is nearest to 4096: its config fits.
  const Decision& near = D(d, 8192);
  EXPECT_EQ(near.provenance, Provenance::kNearestRecord);
  EXPECT_EQ(near.implementation->name(), "scale_cpu_blocked");
  EXPECT_EQ(near.config.ToString(), "block=1024");
  EXPECT_NE(near.reason.find("scale x=f32[4096]"), std::string::npos) << near.reason;
  // 4160 = 65 * 64: block=1024 does not divide it, so the next nearest (16384, loop) is
  // carried over instead.
  const Decision& next = D(d, 4160);
  EXPECT_EQ(next.provenance, Provenance::kNearestRecord);
  EXPECT_EQ(next.implementation->name(), "scale_cpu_loop");
  // Further than nearest_max_distance (log2 units) from every tuned shape: no guide.
  EXPECT_EQ(D(d, 1 << 24).provenance, Provenance::kHeuristic);
  Dispatcher wide = Make(DispatchOptions{.nearest_max_distance = 20.0});
  EXPECT_EQ(D(wide, 1 << 24).provenance, Provenance::kNearestRecord);
  // Nearest records can be switched off.
  Dispatcher off = Make(DispatchOptions{.use_nearest_records = false});
  EXPECT_EQ(D(off, 8192).provenance, Provenance::kHeuristic);
}

TEST_F(DispatcherTest, BadRecordsAreSkippedWithOneWarningEach) {
  AddRecord(8192, cpu_, "scale_cpu_vectorised", "width=8", 0.5);   // not registered
  AddRecord(8192, cpu_, "scale_cpu_loop", "unroll=16", 0.6);       // outside the space
  AddRecord(8100, cpu_, "scale_cpu_blocked", "block=64", 0.7);     // not applicable to 8100
  AddRecord(8192, cpu_, "scale_cpu_blocked", "block=256", 4.0);    // good
  testing::LogCapture log;
  Dispatcher d = Make();
  const Decision& got = D(d, 8192);
  EXPECT_EQ(got.provenance, Provenance::kExactRecord);
  EXPECT_EQ(got.config.ToString(), "block=256");
  EXPECT_EQ(log.Count("scale_cpu_vectorised width=8"), 1);
  EXPECT_NE(log.text().find("not registered"), std::string::npos);
  EXPECT_EQ(log.Count("scale_cpu_loop unroll=16"), 1);
  EXPECT_NE(log.text().find("outside today's space"), std::string::npos);
  const Decision& n8100 = D(d, 8100);
  EXPECT_NE(n8100.implementation, nullptr);
  EXPECT_EQ(log.Count("scale_cpu_blocked block=64"), 1);
  EXPECT_NE(log.text().find("not applicable"), std::string::npos);
  // Explaining again does not warn again.
  ASSERT_TRUE(d.Explain(W(8192)).ok());
  EXPECT_EQ(log.Count("scale_cpu_vectorised width=8"), 1);
}

TEST_F(DispatcherTest, DeterministicOptionSkipsNonDeterministicRecords) {
  AddRecord(8192, cpu_, "scale_cpu_blocked", "block=256", 1.0);
  AddRecord(8192, cpu_, "scale_cpu_loop", "unroll=2", 9.0);
  Dispatcher d = Make(DispatchOptions{.deterministic = true});
  const Decision& got = D(d, 8192);
  EXPECT_EQ(got.implementation->name(), "scale_cpu_loop");
  EXPECT_EQ(got.provenance, Provenance::kExactRecord);
}

TEST_F(DispatcherTest, ExplainListsTheCandidates) {
  AddRecord(8192, cpu_, "scale_cpu_vectorised", "width=8", 0.5);
  AddRecord(8192, cpu_, "scale_cpu_loop", "unroll=2", 5.0);
  Dispatcher d = Make();
  StatusOr<Explanation> e = d.Explain(*ParseWorkload("scale x=f32[8192]"));
  ASSERT_TRUE(e.ok()) << e.status();
  EXPECT_EQ(e->workload, "scale x=f32[8192] factor=2.0");
  ASSERT_EQ(e->considered.size(), 2u);
  EXPECT_EQ(e->considered[0].implementation, "scale_cpu_vectorised");
  EXPECT_NE(e->considered[0].verdict.find("not registered"), std::string::npos);
  EXPECT_EQ(e->considered[1].verdict, "chosen");
  const std::string text = e->ToString();
  EXPECT_NE(text.find("provenance:     exact record"), std::string::npos) << text;
  EXPECT_EQ(d.cached(), 0u);  // explaining does not fill the cache
}

TEST_F(DispatcherTest, NoApplicableImplementationIsAClearError) {
  Target gpu = records::testing::TestGpu();
  Registry only_blocked;
  testing::ScaleRuns runs;
  testing::RegisterScaleOp(&only_blocked, &runs);
  Dispatcher d(only_blocked, gpu, nullptr, {});
  // On a GPU target only scale_cuda runs; it has no strategy rule but is found as the
  // first applicable implementation.
  StatusOr<const CachedDecision*> got = d.Decide(*ParseWorkload("scale x=f32[10]"));
  ASSERT_TRUE(got.ok()) << got.status();
  EXPECT_EQ((*got)->decision.implementation->name(), "scale_cuda");
  Target hip = gpu;
  hip.kind = DeviceKind::kHip;
  Dispatcher none(only_blocked, hip, nullptr, {});
  StatusOr<const CachedDecision*> missing = none.Decide(*ParseWorkload("scale x=f32[10]"));
  ASSERT_FALSE(missing.ok());
  EXPECT_NE(missing.status().message().find("no implementation of scale applies"),
            std::string::npos)
      << missing.status();
  EXPECT_FALSE(d.Decide(*ParseWorkload("scale x=f16[10]")).ok());  // invalid workload
}

TEST_F(DispatcherTest, EightThreadsDispatchConcurrently) {
  for (int i = 0; i < 20; ++i) AddRecord(64 * (i + 1), cpu_, "scale_cpu_loop", "unroll=2", 1.0);
  Dispatcher d = Make();
  std::vector<Workload> workloads;
  for (int i = 0; i < 64; ++i) workloads.push_back(W(64 * (i + 1)));
  std::vector<std::vector<const CachedDecision*>> seen(8);
  std::vector<std::thread> threads;
  for (int t = 0; t < 8; ++t) {
    threads.emplace_back([&, t] {
      for (int round = 0; round < 200; ++round) {
        for (size_t i = 0; i < workloads.size(); ++i) {
          const Workload& w = workloads[(i * 7 + t * 13 + round) % workloads.size()];
          StatusOr<const CachedDecision*> got = d.Decide(w);
          if (!got.ok()) std::abort();
          if (round == 199) seen[t].push_back(*got);
        }
      }
    });
  }
  for (auto& th : threads) th.join();
  EXPECT_EQ(d.cached(), workloads.size());
  // Every thread got the one cached entry per workload, with the right decision.
  for (size_t i = 0; i < workloads.size(); ++i) {
    StatusOr<const CachedDecision*> got = d.Decide(workloads[i]);
    ASSERT_TRUE(got.ok());
    EXPECT_EQ((*got)->workload, workloads[i]);
    EXPECT_EQ((*got)->decision.provenance,
              i < 20 ? Provenance::kExactRecord : Provenance::kNearestRecord);
  }
  for (int t = 0; t < 8; ++t) {
    for (const CachedDecision* e : seen[t]) EXPECT_EQ(d.Decide(e->workload).value(), e);
  }
}

}  // namespace
}  // namespace opsched
