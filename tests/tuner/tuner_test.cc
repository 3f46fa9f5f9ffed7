#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <map>
#include <set>
#include <thread>

#include <gtest/gtest.h>

#include "records/database.h"
#include "records/log_reader.h"
#include "records/log_writer.h"
#include "tests/records/record_factory.h"
#include "tests/test_util.h"
#include "core/gpu/l2_flush_kernels.h"
#include "tuner/evaluator.h"
#include "tuner/l2_flusher.h"
#include "tuner/measure.h"
#include "tuner/memory_need.h"
#include "tuner/search_policy.h"
#include "tuner/session.h"
#include "tuner/study.h"
#include "tuner/worker.h"
#include "tuner/workload_tuner.h"

namespace opsched {
namespace {

const char* kBump = "bump x=f32[256]";

std::string TempPath(const std::string& name) {
  const char* dir = std::getenv("TEST_TMPDIR");
  std::string path = std::string(dir ? dir : "/tmp") + "/" + name;
  std::remove(path.c_str());
  return path;
}

Workload Bump() { return *Registry::Global().ParseCanonical(kBump); }

MeasureOptions Quick() {
  MeasureOptions m;
  m.warmups = 1;
  m.min_repeats = 3;
  m.min_total_ms = 0.5;
  m.max_total_ms = 50;
  return m;
}

// ---- statistics and the repeat policy, on a synthetic clock ----

class ScriptedClock : public SampleClock {
 public:
  explicit ScriptedClock(std::function<double(int)> duration) : duration_(std::move(duration)) {}
  Status Sample(int count, std::vector<double>* us) override {
    for (int i = 0; i < count; ++i) us->push_back(duration_(calls_++));
    return absl::OkStatus();
  }
  int calls_ = 0;

 private:
  std::function<double(int)> duration_;
};

TEST(MeasureTest, SummaryStatistics) {
  Stats s = Summarize({5, 1, 4, 2, 3}, 2);
  EXPECT_DOUBLE_EQ(s.median_us, 3);
  EXPECT_DOUBLE_EQ(s.min_us, 1);
  EXPECT_DOUBLE_EQ(s.max_us, 5);
  EXPECT_DOUBLE_EQ(s.mean_us, 3);
  EXPECT_NEAR(s.stddev_us, std::sqrt(2.5), 1e-12);
  EXPECT_EQ(s.repeats, 5);
  EXPECT_EQ(s.warmups, 2);
  EXPECT_DOUBLE_EQ(Summarize({4, 1, 3, 2}, 0).median_us, 2.5);
}

TEST(MeasureTest, RepeatsUntilMinimumCountAndTime) {
  // 1 ms per repetition, at least 5 repetitions and 20 ms: 20 timed, 3 warm-ups unseen.
  ScriptedClock clock([](int) { return 1000.0; });
  MeasureOptions o;
  o.warmups = 3;
  o.min_repeats = 5;
  o.min_total_ms = 20;
  StatusOr<Stats> s = MeasureUntil(clock, o);
  ASSERT_TRUE(s.ok());
  EXPECT_EQ(s->repeats, 20);
  EXPECT_EQ(s->warmups, 3);
  EXPECT_EQ(clock.calls_, 23);
  // Slow candidates: the count decides (10 ms each, 5 repetitions reach 20 ms).
  ScriptedClock slow([](int) { return 10000.0; });
  EXPECT_EQ(MeasureUntil(slow, o)->repeats, 5);
  // The maxima cap a runaway: 0.1 ms each, min 20 ms, but at most 50 repetitions.
  o.max_repeats = 50;
  ScriptedClock fast([](int) { return 100.0; });
  EXPECT_EQ(MeasureUntil(fast, o)->repeats, 50);
}

// A device clock's samples with the host time of each call beside them.
class HostTimedClock : public ScriptedClock {
 public:
  HostTimedClock(std::function<double(int)> device, std::function<double(int)> host)
      : ScriptedClock(std::move(device)), host_(std::move(host)) {}
  Status Sample(int count, std::vector<double>* us) override {
    for (int i = 0; i < count; ++i) host_us_.push_back(host_(calls_ + i));
    return ScriptedClock::Sample(count, us);
  }
  const std::vector<double>& host_samples() const override { return host_us_; }

 private:
  std::function<double(int)> host_;
  std::vector<double> host_us_;
};

TEST(MeasureTest, HostTimeIsTheMedianOfTheHostSamples) {
  MeasureOptions o;
  o.warmups = 2;
  o.min_repeats = 20;
  o.min_total_ms = 0;
  // 10 us on the device; 25 us on the host, with a slow first call.
  HostTimedClock clock([](int) { return 10.0; }, [](int i) { return i == 0 ? 900.0 : 25.0 + (i % 2 == 0); });
  StatusOr<Stats> s = MeasureUntil(clock, o);
  ASSERT_TRUE(s.ok());
  EXPECT_DOUBLE_EQ(s->median_us, 10.0);
  EXPECT_DOUBLE_EQ(s->host_us, 25.5);  // 22 calls: 900, then 11 of 25 and 10 of 26
  EXPECT_DOUBLE_EQ(ToProto(*s).host_us(), 25.5);
  EXPECT_DOUBLE_EQ(FromProto(ToProto(*s)).host_us, 25.5);
  // A clock whose samples are host times already reports none.
  ScriptedClock cpu([](int) { return 10.0; });
  EXPECT_DOUBLE_EQ(MeasureUntil(cpu, o)->host_us, 0.0);
}

TEST(L2FlushTest, NamesReadBackAndAnUnknownOneIsAClearError) {
  for (L2Flush f : {L2Flush::kRead, L2Flush::kOverwrite, L2Flush::kNone}) {
    StatusOr<L2Flush> back = ParseL2Flush(L2FlushName(f));
    ASSERT_TRUE(back.ok()) << back.status();
    EXPECT_EQ(*back, f);
  }
  EXPECT_EQ(L2FlushName(MeasureOptions{}.l2_flush), "read");  // the default
  const StatusOr<L2Flush> bad = ParseL2Flush("fill");
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("unknown L2 flush 'fill' (read, overwrite or none)"), std::string::npos)
      << bad.status();
}

// Stats (and so records) say which flush preceded the repetitions; a clock without one
// (the CPU's) leaves it empty.
TEST(MeasureTest, StatsSayWhichL2FlushMeasuredThem) {
  class FlushedClock : public ScriptedClock {
   public:
    FlushedClock() : ScriptedClock([](int) { return 10.0; }) {}
    std::string l2_flush() const override { return "overwrite"; }
  };
  MeasureOptions o;
  o.min_total_ms = 0;
  FlushedClock flushed;
  StatusOr<Stats> s = MeasureUntil(flushed, o);
  ASSERT_TRUE(s.ok()) << s.status();
  EXPECT_EQ(s->l2_flush, "overwrite");
  EXPECT_EQ(ToProto(*s).l2_flush(), "overwrite");
  EXPECT_EQ(FromProto(ToProto(*s)).l2_flush, "overwrite");
  ScriptedClock cpu([](int) { return 10.0; });
  EXPECT_EQ(MeasureUntil(cpu, o)->l2_flush, "");
}

// On a GPU: an input half the L2 size, read again and again, stays in L2 without a flush;
// the read flush and the overwrite both send it back to device memory, so each read of it
// then takes longer. The read flush leaves its own buffer as it was.
TEST(L2FlusherTest, EachFlushEmptiesL2AsItSaysOnAGpu) {
  OPSCHED_REQUIRE_GPU();
  StatusOr<Target> gpu = QueryTarget(Device::Cuda(0));
  OPSCHED_ASSERT_OK(gpu.status());
  StatusOr<Stream> stream = Stream::Create(gpu->device());
  OPSCHED_ASSERT_OK(stream.status());
  const size_t bytes = static_cast<size_t>(std::max<int64_t>(gpu->l2_bytes, 8 << 20) / 2) & ~size_t(15);
  StatusOr<Buffer> input = Buffer::Allocate(gpu->device(), bytes);
  OPSCHED_ASSERT_OK(input.status());
  std::vector<uint32_t> pattern(bytes / 4);
  for (size_t i = 0; i < pattern.size(); ++i) pattern[i] = static_cast<uint32_t>(i * 2654435761u);
  OPSCHED_ASSERT_OK(gpu::MemcpyAsync(input->data(), pattern.data(), bytes, stream->native()));
  OPSCHED_ASSERT_OK(gpu::ReadBufferAsync(input->data(), bytes, stream->native()));
  std::vector<uint32_t> back(pattern.size());
  OPSCHED_ASSERT_OK(gpu::MemcpyAsync(back.data(), input->data(), bytes, stream->native()));
  OPSCHED_ASSERT_OK(stream->Synchronize());
  EXPECT_TRUE(back == pattern) << "the read kernel changed the buffer it read";

  std::map<L2Flush, double> median;
  for (L2Flush kind : {L2Flush::kNone, L2Flush::kRead, L2Flush::kOverwrite}) {
    StatusOr<L2Flusher> flusher = L2Flusher::Create(kind, *stream, gpu->l2_bytes);
    OPSCHED_ASSERT_OK(flusher.status());
    EXPECT_EQ(flusher->kind(), kind);
    constexpr int kRepetitions = 31;
    std::vector<Event> starts, ends;
    for (int i = 0; i < kRepetitions; ++i) {
      starts.push_back(*Event::Create(gpu->device()));
      ends.push_back(*Event::Create(gpu->device()));
    }
    OPSCHED_ASSERT_OK(gpu::ReadBufferAsync(input->data(), bytes, stream->native()));  // in L2 now
    for (int i = 0; i < kRepetitions; ++i) {
      OPSCHED_ASSERT_OK(flusher->Flush(*stream, i));
      OPSCHED_ASSERT_OK(starts[i].Record(*stream));
      OPSCHED_ASSERT_OK(gpu::ReadBufferAsync(input->data(), bytes, stream->native()));
      OPSCHED_ASSERT_OK(ends[i].Record(*stream));
    }
    OPSCHED_ASSERT_OK(stream->Synchronize());
    std::vector<double> us;
    for (int i = 0; i < kRepetitions; ++i) us.push_back(*Event::ElapsedMs(starts[i], ends[i]) * 1000);
    median[kind] = Median(us);
  }
  std::printf("reading %zu MiB: %.2f us after no flush, %.2f after the read flush, %.2f after the overwrite\n",
              bytes >> 20, median[L2Flush::kNone], median[L2Flush::kRead], median[L2Flush::kOverwrite]);
  EXPECT_GT(median[L2Flush::kRead], 1.2 * median[L2Flush::kNone]);
  EXPECT_GT(median[L2Flush::kOverwrite], 1.2 * median[L2Flush::kNone]);
}

TEST(MeasureTest, MedianIgnoresOutliersAndWarmupsAreDiscarded) {
  // The first 3 calls (warm-ups) are 100x slower; one timed repetition in 10 is an outlier.
  ScriptedClock clock([](int i) { return i < 3 ? 1e6 : (i % 10 == 0 ? 5000.0 : 100.0 + i % 3); });
  MeasureOptions o;
  o.warmups = 3;
  o.min_repeats = 30;
  o.min_total_ms = 1;
  StatusOr<Stats> s = MeasureUntil(clock, o);
  ASSERT_TRUE(s.ok());
  EXPECT_EQ(s->median_us, 101.0);
  EXPECT_EQ(s->max_us, 5000.0);
  EXPECT_LT(s->max_us, 1e6);
}

TEST(MeasureTest, CutoffCutsAHopelessCandidateShort) {
  MeasureOptions o;
  o.warmups = 3;
  o.min_repeats = 10;
  o.min_total_ms = 20;
  o.cutoff_us = 500;
  // 2 ms per run, four times the cutoff: one warm-up and one timed run.
  ScriptedClock slow([](int) { return 2000.0; });
  StatusOr<Stats> s = MeasureUntil(slow, o);
  ASSERT_TRUE(s.ok());
  EXPECT_EQ(s->repeats, 1);
  EXPECT_EQ(s->warmups, 1);
  EXPECT_EQ(slow.calls_, 2);
  EXPECT_DOUBLE_EQ(s->median_us, 2000.0);
  // A cold first run above the cutoff, then fast: measured in full (the first timed run kept).
  ScriptedClock cold([](int i) { return i == 0 ? 1e5 : 100.0; });
  s = MeasureUntil(cold, o);
  ASSERT_TRUE(s.ok());
  EXPECT_GE(s->repeats, 200);  // 20 ms at 0.1 ms (one more when the sum rounds below 20)
  EXPECT_LE(s->repeats, 201);
  EXPECT_EQ(s->warmups, 1);
  EXPECT_DOUBLE_EQ(s->median_us, 100.0);
  // Fast warm-ups, then slow timed runs: the first round's median stops it.
  ScriptedClock late([](int i) { return i < 3 ? 100.0 : 1000.0; });
  s = MeasureUntil(late, o);
  ASSERT_TRUE(s.ok());
  EXPECT_EQ(s->repeats, 10);
  EXPECT_EQ(late.calls_, 13);
  // Off by default: the same slow candidate gets its full 10 repetitions and 3 warm-ups.
  o.cutoff_us = 0;
  ScriptedClock full([](int) { return 2000.0; });
  s = MeasureUntil(full, o);
  EXPECT_EQ(s->repeats, 10);
  EXPECT_EQ(s->warmups, 3);
}

TEST(MemoryNeedTest, ADeviceTooSmallForTheTensorsIsAClearError) {
  const Workload w = *Registry::Global().ParseCanonical("bump x=f32[1048576]");
  const OpDef* op = Registry::Global().FindOp("bump");
  ASSERT_NE(op, nullptr);
  Target gpu;
  gpu.kind = DeviceKind::kCuda;
  gpu.device_name = "a small GPU";
  gpu.memory_bytes = int64_t{6} << 20;  // x and the output need 8 MiB
  const Status small = CheckMemoryNeed(*op, w, gpu);
  EXPECT_EQ(small.code(), absl::StatusCode::kResourceExhausted);
  EXPECT_NE(std::string(small.message()).find("of device memory; a small GPU has"), std::string::npos)
      << small.message();
  gpu.memory_bytes = int64_t{1} << 30;
  EXPECT_TRUE(CheckMemoryNeed(*op, w, gpu).ok());
}

// ---- evaluation: wrong results, crashes and hangs ----

TEST(EvaluatorTest, WrongResultIsRecordedAndNotTimed) {
  LocalEvaluator evaluator(Registry::Global(), CpuTarget());
  EvaluateOptions o;
  o.measure = Quick();
  Evaluation e = evaluator.Evaluate(Bump(), Candidate{"bump_wrong", Config()}, o);
  EXPECT_EQ(e.status, records::WRONG_RESULT);
  EXPECT_NE(e.message.find("float64 reference"), std::string::npos) << e.message;
  EXPECT_EQ(e.stats.repeats, 0);
  Evaluation good = evaluator.Evaluate(Bump(), Candidate{"bump_tuned", *ParseConfig("a=11,b=5")}, o);
  EXPECT_EQ(good.status, records::OK) << good.message;
  EXPECT_GE(good.stats.repeats, 3);
  EXPECT_GT(good.stats.median_us, 5);
  EXPECT_EQ(good.stats.l2_flush, "");  // a CPU measurement has no flush
  EXPECT_EQ(evaluator.Evaluate(Bump(), Candidate{"bump_tuned", *ParseConfig("a=99,b=5")}, o).status,
            records::NOT_APPLICABLE);
  EXPECT_EQ(evaluator.Evaluate(Bump(), Candidate{"no_such", Config()}, o).status,
            records::NOT_APPLICABLE);
}

TEST(EvaluatorTest, HostTimeShowsACallThatWaitsForTheDevice) {
  OPSCHED_REQUIRE_GPU();
  StatusOr<Target> gpu = QueryTarget(Device::Cuda(0));
  OPSCHED_ASSERT_OK(gpu.status());
  LocalEvaluator evaluator(Registry::Global(), *gpu);
  EvaluateOptions o;
  o.measure = Quick();
  // Enough repetitions to fill the device's launch queue if they were all queued at once
  // (a flush, two events and two kernels each): the host must still time submission only.
  o.measure.min_repeats = 400;
  const Evaluation async = evaluator.Evaluate(Bump(), Candidate{"bump_cuda", Config()}, o);
  const Evaluation sync = evaluator.Evaluate(Bump(), Candidate{"bump_cuda_sync", Config()}, o);
  ASSERT_EQ(async.status, records::OK) << async.message;
  ASSERT_EQ(sync.status, records::OK) << sync.message;
  // Both run 40 us on the device.
  EXPECT_GT(async.stats.median_us, 35);
  EXPECT_GT(sync.stats.median_us, 35);
  // Submitting takes a few microseconds; waiting takes at least the device time.
  EXPECT_GT(async.stats.host_us, 0);
  EXPECT_LT(async.stats.host_us, 0.5 * async.stats.median_us) << async.stats.host_us;
  EXPECT_GE(sync.stats.host_us, sync.stats.median_us) << sync.stats.host_us;
  EXPECT_EQ(async.stats.l2_flush, "read");  // the default flush, recorded
}

// --verify: the names, and the choice reaching a worker process. A CPU target has no
// device verification, so asking for one is the candidate's clear error there.
TEST(EvaluatorTest, VerificationIsNamedAndTravelsToTheWorker) {
  for (Verification v : {Verification::kAuto, Verification::kHost, Verification::kDevice}) {
    StatusOr<Verification> parsed = ParseVerification(VerificationName(v));
    OPSCHED_ASSERT_OK(parsed.status());
    EXPECT_EQ(*parsed, v);
  }
  EXPECT_EQ(Message(ParseVerification("gpu").status()), "unknown verification 'gpu' (auto, host or device)");
  WorkerEvaluator evaluator(Device::Cpu(), /*timeout_s=*/30);
  EvaluateOptions o;
  o.measure = Quick();
  for (Verification v : {Verification::kAuto, Verification::kHost}) {
    o.verification = v;
    const Evaluation e = evaluator.Evaluate(Bump(), Candidate{"bump_tuned", *ParseConfig("a=1,b=1")}, o);
    EXPECT_EQ(e.status, records::OK) << VerificationName(v) << ": " << e.message;
  }
  o.verification = Verification::kDevice;
  const Evaluation device = evaluator.Evaluate(Bump(), Candidate{"bump_tuned", *ParseConfig("a=1,b=1")}, o);
  EXPECT_NE(device.status, records::OK);
  EXPECT_NE(device.message.find("has no device verification for cpu"), std::string::npos) << device.message;
}

TEST(EvaluatorTest, CrashAndHangEndTheWorkerNotTheSession) {
  WorkerEvaluator evaluator(Device::Cpu(), /*timeout_s=*/1.5);
  EvaluateOptions o;
  o.measure = Quick();
  Evaluation crash = evaluator.Evaluate(Bump(), Candidate{"bump_crash", Config()}, o);
  EXPECT_EQ(crash.status, records::CRASHED);
  EXPECT_NE(crash.message.find("signal 11"), std::string::npos) << crash.message;
  Evaluation ok = evaluator.Evaluate(Bump(), Candidate{"bump_tuned", *ParseConfig("a=1,b=1")}, o);
  EXPECT_EQ(ok.status, records::OK) << ok.message;
  const auto start = std::chrono::steady_clock::now();
  Evaluation hang = evaluator.Evaluate(Bump(), Candidate{"bump_hang", Config()}, o);
  const double waited = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  EXPECT_EQ(hang.status, records::TIMEOUT);
  EXPECT_NE(hang.message.find("1.5 s"), std::string::npos) << hang.message;
  EXPECT_LT(waited, 10.0);
  Evaluation after = evaluator.Evaluate(Bump(), Candidate{"bump_wrong", Config()}, o);
  EXPECT_EQ(after.status, records::WRONG_RESULT);
  EXPECT_EQ(evaluator.worker_starts(), 3);  // first, after the crash, after the hang
}

// ---- sessions ----

// Answers from a formula instead of measuring: cost = 10 + 20 * (|a - 11| + |b - 5|).
class SyntheticEvaluator : public CandidateEvaluator {
 public:
  Evaluation Evaluate(const Workload&, const Candidate& c, const EvaluateOptions&) override {
    ++calls;
    Evaluation e;
    if (c.implementation != "bump_tuned") {
      e.status = records::WRONG_RESULT;
      return e;
    }
    e.status = records::OK;
    e.stats.median_us = Cost(c.config);
    e.stats.repeats = 1;
    return e;
  }
  static double Cost(const Config& c) {
    return 10 + 20 * (std::abs(c.GetInt("a", 0) - 11) + std::abs(c.GetInt("b", 0) - 5));
  }
  int calls = 0;
};

std::string WriteSuite(const std::string& name, const std::string& text) {
  const std::string path = TempPath(name);
  std::ofstream(path) << text;
  return path;
}

TuneOptions Options(const std::string& suite, const std::string& log, const std::string& policy, int trials) {
  TuneOptions o;
  o.suite_path = suite;
  o.records_path = log;
  o.target = CpuTarget();
  o.policy = policy;
  o.trials = trials;
  o.measure = Quick();
  o.progress = false;
  return o;
}

std::vector<records::Record> ReadLog(const std::string& path) {
  std::vector<records::Record> out;
  EXPECT_TRUE(records::ReadRecords(path, [&](const records::Record& r, uint64_t) { out.push_back(r); }).ok());
  return out;
}

TEST(SessionTest, BadLinesAreReportedAndTheRestRuns) {
  const std::string suite = WriteSuite("bad.txt", "# suite\nbump x=f32[256]\nbump x=f16[3]\nbump y\n\nbump x=f32[64]\n");
  const std::string log = TempPath("bad.log");
  SyntheticEvaluator evaluator;
  StatusOr<TuneReport> report = TuneSession(Registry::Global(), Options(suite, log, "grid", 5), &evaluator).Run();
  ASSERT_TRUE(report.ok()) << report.status();
  ASSERT_EQ(report->workloads.size(), 4u);
  EXPECT_EQ(report->workloads[1].line, 3);
  EXPECT_NE(report->workloads[1].error.find("bad.txt:3: bump takes x=f32[n]"), std::string::npos)
      << report->workloads[1].error;
  EXPECT_NE(report->workloads[2].error.find("bad.txt:4: column 6: expected name=value"), std::string::npos)
      << report->workloads[2].error;
  EXPECT_EQ(report->workloads[0].trials, 5);
  EXPECT_EQ(report->workloads[3].trials, 5);
  EXPECT_EQ(ReadLog(log).size(), 10u);
  EXPECT_NE(report->ToString().find("bump_tuned"), std::string::npos);
}

TEST(SessionTest, MeasuresTheHeuristicFirstAndFindsTheOptimum) {
  const std::string suite = WriteSuite("grid.txt", std::string(kBump) + "\n");
  const std::string log = TempPath("grid.log");
  SyntheticEvaluator evaluator;
  StatusOr<TuneReport> report = TuneSession(Registry::Global(), Options(suite, log, "grid", 1000), &evaluator).Run();
  ASSERT_TRUE(report.ok());
  const WorkloadResult& r = report->workloads[0];
  EXPECT_EQ(r.candidates, 256 + 3);  // bump_tuned's space and three knob-less impls
  EXPECT_EQ(r.trials, 259);
  EXPECT_EQ(r.best_config, "a=11,b=5");
  EXPECT_DOUBLE_EQ(r.best_us, 10);
  EXPECT_EQ(r.failures, 3);
  std::vector<records::Record> recs = ReadLog(log);
  ASSERT_EQ(recs.size(), 259u);
  // No strategy for "bump": the heuristic is the first applicable implementation.
  EXPECT_EQ(recs[0].provenance().search_policy(), "heuristic");
  std::set<std::string> distinct;
  for (const auto& rec : recs) distinct.insert(rec.implementation() + rec.config().SerializeAsString());
  EXPECT_EQ(distinct.size(), 259u);
}

// A transfer log of `line` tuned on another device of this host's arch (CPU, other name):
// config a=11,b=5 (the optimum of SyntheticEvaluator) at `us`.
std::string OtherDeviceLog(const std::string& name, const std::string& line, double us) {
  Target other = CpuTarget();
  other.device_name += " (another device)";
  const std::string path = TempPath(name);
  auto writer = records::LogWriter::Open(path);
  EXPECT_TRUE(writer.ok());
  if (writer.ok()) {
    EXPECT_TRUE((*writer)->Append(records::testing::MakeRecord(line, other, "bump_tuned", "a=11,b=5", us)).ok());
  }
  return path;
}

TEST(SessionTest, AnotherDevicesRecordIsMeasuredFirstOnANewDevice) {
  // The transfer log's record is of another CPU (same arch key, other fingerprint): a
  // Runtime here does not serve it, but the session measures its choice right after the
  // rule's, so a two-trial session already finds the optimum, measured here.
  const std::string suite = WriteSuite("transfer.txt", std::string(kBump) + "\n");
  const std::string log = TempPath("transfer.log");
  TuneOptions o = Options(suite, log, "random", 2);
  o.transfer_logs = {OtherDeviceLog("other_device.log", kBump, 99)};
  SyntheticEvaluator evaluator;
  StatusOr<TuneReport> report = TuneSession(Registry::Global(), o, &evaluator).Run();
  ASSERT_TRUE(report.ok()) << report.status();
  EXPECT_EQ(report->workloads[0].best_config, "a=11,b=5");
  EXPECT_DOUBLE_EQ(report->workloads[0].best_us, 10);  // measured here, not the log's 99
  const std::vector<records::Record> recs = ReadLog(log);
  ASSERT_EQ(recs.size(), 2u);
  EXPECT_EQ(recs[0].provenance().search_policy(), "heuristic");
  EXPECT_EQ(recs[1].provenance().search_policy(), "transferred");
  EXPECT_EQ(recs[1].target().device_name(), CpuTarget().device_name);

  // Without the transfer log the same two trials miss it (the rule, then a random pick).
  const std::string cold = TempPath("cold.log");
  SyntheticEvaluator again;
  StatusOr<TuneReport> without = TuneSession(Registry::Global(), Options(suite, cold, "random", 2), &again).Run();
  ASSERT_TRUE(without.ok()) << without.status();
  EXPECT_NE(without->workloads[0].best_config, "a=11,b=5");
}

TEST(TransferExamplesTest, AnotherDeviceOfTheArchOnlyWhereThisOneHasNone) {
  const Target here = CpuTarget();
  Target other = here;
  other.device_name += " (another device)";
  Target other_arch = here;
  other_arch.arch += "-other";
  const Workload w = Bump();
  records::Database db;
  OPSCHED_ASSERT_OK(db.Add(records::testing::MakeRecord("bump x=f32[64]", other, "bump_tuned", "a=1,b=1", 50)));
  OPSCHED_ASSERT_OK(db.Add(records::testing::MakeRecord("bump x=f32[32]", other_arch, "bump_tuned", "a=2,b=1", 60)));
  OPSCHED_ASSERT_OK(db.Add(records::testing::MakeRecord(kBump, other, "bump_tuned", "a=3,b=1", 70)));  // the workload itself
  std::vector<TransferExample> got = TransferExamples(db, here, w);
  ASSERT_EQ(got.size(), 1u);  // the other device's record of another workload; never another arch's
  EXPECT_EQ(got[0].candidate.config.ToString(), "a=1,b=1");
  EXPECT_EQ(got[0].time_us, 50);
  // Once this device has records of the op, they alone are the examples.
  OPSCHED_ASSERT_OK(db.Add(records::testing::MakeRecord("bump x=f32[16]", here, "bump_tuned", "a=4,b=1", 40)));
  got = TransferExamples(db, here, w);
  ASSERT_EQ(got.size(), 1u);
  EXPECT_EQ(got[0].candidate.config.ToString(), "a=4,b=1");
}

TEST(SessionTest, SmallSpacesAreCoveredBeforeThePolicySearches) {
  // With 4 random trials, the three one-config implementations are all measured (the
  // heuristic, then coverage), and bump_tuned's 256 configs get the one trial left.
  const std::string suite = WriteSuite("coverage.txt", std::string(kBump) + "\n");
  const std::string log = TempPath("coverage.log");
  SyntheticEvaluator evaluator;
  StatusOr<TuneReport> report = TuneSession(Registry::Global(), Options(suite, log, "random", 4), &evaluator).Run();
  ASSERT_TRUE(report.ok()) << report.status();
  std::map<std::string, std::string> policy_of;
  for (const records::Record& r : ReadLog(log)) policy_of[r.implementation()] = r.provenance().search_policy();
  ASSERT_EQ(policy_of.size(), 4u);
  EXPECT_EQ(policy_of["bump_crash"], "heuristic");
  EXPECT_EQ(policy_of["bump_wrong"], "coverage");
  EXPECT_EQ(policy_of["bump_hang"], "coverage");
  EXPECT_EQ(policy_of["bump_tuned"], "random");  // a large space is left to the policy
}

TEST(SessionTest, TrialAndMemoryBudgetsAndEarlyStopping) {
  const std::string suite = WriteSuite("budget.txt", std::string(kBump) + "\n");
  {
    SyntheticEvaluator evaluator;
    TuneOptions o = Options(suite, TempPath("b1.log"), "random", 7);
    StatusOr<TuneReport> report = TuneSession(Registry::Global(), o, &evaluator).Run();
    EXPECT_EQ(report->workloads[0].trials, 7);
    EXPECT_EQ(evaluator.calls, 7);
  }
  {
    SyntheticEvaluator evaluator;
    TuneOptions o = Options(suite, TempPath("b2.log"), "grid", 1000);
    o.memory_budget = 8 * 1024;  // a <= 8
    StatusOr<TuneReport> report = TuneSession(Registry::Global(), o, &evaluator).Run();
    EXPECT_EQ(report->workloads[0].over_budget, 8 * 16);
    EXPECT_EQ(report->workloads[0].candidates, 8 * 16 + 3);
    EXPECT_EQ(report->workloads[0].best_config, "a=8,b=5");
  }
  {
    SyntheticEvaluator evaluator;
    TuneOptions o = Options(suite, TempPath("b3.log"), "grid", 1000);
    o.early_stop = 20;
    StatusOr<TuneReport> report = TuneSession(Registry::Global(), o, &evaluator).Run();
    // Grid order: bump_crash (the heuristic) and bump_hang fail, then bump_tuned's space
    // with a varying fastest; the optimum (a=11, b=5) is its 4 * 16 + 11 = 75th config,
    // after which 20 trials bring no improvement.
    EXPECT_EQ(report->workloads[0].trials, 2 + 75 + 20);
  }
  {
    // A time budget of 0.3 s with real (slow) measurements stops well before 1000.
    WorkerEvaluator evaluator(Device::Cpu(), 5);
    TuneOptions o = Options(suite, TempPath("b4.log"), "random", 1000);
    o.time_budget_s = 0.3;
    const auto start = std::chrono::steady_clock::now();
    StatusOr<TuneReport> report = TuneSession(Registry::Global(), o, &evaluator).Run();
    ASSERT_TRUE(report.ok());
    EXPECT_LT(report->workloads[0].trials, 259);
    EXPECT_LT(std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count(), 8.0);
  }
}

TEST(SessionTest, ResumesAfterAKillWithoutLosingOrRepeating) {
  const std::string suite = WriteSuite("resume.txt", std::string(kBump) + "\nbump x=f32[64]\n");
  const std::string log = TempPath("resume.log");
  const int planned = 2 * 40;
  pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    WorkerEvaluator evaluator(Device::Cpu(), 2);
    TuneOptions o = Options(suite, log, "random", 40);
    o.no_retry = true;  // retries of timeouts and crashes: tests/tuner/retry_test.cc
    (void)TuneSession(Registry::Global(), o, &evaluator).Run();
    _exit(0);
  }
  // Kill the session (SIGKILL, no clean-up) once some records are in.
  for (int i = 0; i < 600; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    if (std::ifstream(log) && ReadLog(log).size() >= 15) break;
  }
  kill(child, SIGKILL);
  waitpid(child, nullptr, 0);
  const size_t before = ReadLog(log).size();
  ASSERT_GE(before, 15u);
  ASSERT_LT(before, static_cast<size_t>(planned));
  WorkerEvaluator evaluator(Device::Cpu(), 2);
  TuneOptions resumed = Options(suite, log, "random", 40);
  resumed.no_retry = true;
  StatusOr<TuneReport> report = TuneSession(Registry::Global(), resumed, &evaluator).Run();
  ASSERT_TRUE(report.ok());
  EXPECT_EQ(report->workloads[0].trials + report->workloads[1].trials, planned);
  EXPECT_EQ(static_cast<size_t>(report->measured), planned - before);
  std::vector<records::Record> recs = ReadLog(log);
  ASSERT_EQ(recs.size(), static_cast<size_t>(planned));
  std::set<std::string> distinct;
  for (const auto& r : recs) {
    distinct.insert(r.workload().key() + r.implementation() + r.config().SerializeAsString());
  }
  EXPECT_EQ(distinct.size(), recs.size());  // nothing measured twice
}

// ---- guided search ----

int TrialsToReach(const std::string& policy_name, uint64_t seed, double target_us) {
  std::vector<Candidate> candidates;
  const Workload w = Bump();
  const Implementation* impl = Registry::Global().FindImplementation("bump_tuned");
  for (const Config& c : impl->Space(w, CpuTarget()).Enumerate()) candidates.push_back({"bump_tuned", c});
  PolicyOptions po;
  po.seed = seed;
  auto policy = MakeSearchPolicy(policy_name, w, candidates, po);
  EXPECT_TRUE(policy.ok());
  int trials = 0;
  while (true) {
    std::vector<size_t> batch = (*policy)->Next(8);
    if (batch.empty()) return trials;
    for (size_t i : batch) {
      const double t = SyntheticEvaluator::Cost(candidates[i].config);
      (*policy)->Observe(i, t);
      ++trials;
      if (t <= target_us) return trials;
    }
  }
}

TEST(StudyTest, ReplayCountsTrialsToTheTarget) {
  StatusOr<Workload> w = Registry::Global().ParseCanonical(kBump);
  ASSERT_TRUE(w.ok());
  // 256 candidates on a bowl with its minimum (10 us) at index 200; one failure.
  std::vector<Candidate> candidates;
  std::vector<double> times;
  for (int i = 0; i < 256; ++i) {
    Config c;
    c.Set("a", int64_t(i / 16 + 1));
    c.Set("b", int64_t(i % 16 + 1));
    candidates.push_back(Candidate{"bump_tuned", c});
    times.push_back(i == 7 ? -1 : 10 + 2.0 * std::abs(i / 16 - 12) + 3.0 * std::abs(i % 16 - 8));
  }
  // Grid walks in order: index 200 (a=13, b=9) is its 201st trial.
  StatusOr<StudyResult> grid = ReplaySearch("grid", *w, candidates, times, 2, 0.999);
  ASSERT_TRUE(grid.ok()) << grid.status();
  EXPECT_EQ(grid->trials_to_target, (std::vector<int>{201, 201}));
  EXPECT_DOUBLE_EQ(grid->best_us, 10);
  StatusOr<StudyResult> random = ReplaySearch("random", *w, candidates, times, 5, 0.95);
  StatusOr<StudyResult> xgb = ReplaySearch("xgb", *w, candidates, times, 5, 0.95);
  ASSERT_TRUE(random.ok() && xgb.ok());
  EXPECT_EQ(random->trials_to_target.size(), 5u);
  EXPECT_LT(xgb->mean_trials, random->mean_trials);
  EXPECT_FALSE(ReplaySearch("annealing", *w, candidates, times, 1, 0.95).ok());
  EXPECT_FALSE(ReplaySearch("grid", *w, candidates, std::vector<double>(256, -1), 1, 0.95).ok());
}

TEST(SearchPolicyTest, FirstGuidedPicksSpanEveryImplementation) {
  StatusOr<Workload> w = Registry::Global().ParseCanonical(kBump);
  ASSERT_TRUE(w.ok());
  // 250 configs of one implementation and 5 of another: before its first model the
  // guided policy takes the implementations in turn, whatever their space sizes.
  std::vector<Candidate> candidates;
  for (int i = 0; i < 255; ++i) {
    Config c;
    c.Set("a", int64_t(i));
    candidates.push_back(Candidate{i < 250 ? "big" : "small", c});
  }
  for (uint64_t seed = 1; seed <= 10; ++seed) {
    PolicyOptions o;
    o.seed = seed;
    auto policy = MakeSearchPolicy("xgb", *w, candidates, o);
    ASSERT_TRUE(policy.ok());
    std::set<std::string> seen;
    for (size_t i : (*policy)->Next(4)) seen.insert(candidates[i].implementation);
    EXPECT_EQ(seen.size(), 2u) << "seed " << seed;
  }
}

TEST(SearchPolicyTest, XgboostBeatsRandomOnASyntheticSurface) {
  // 95% of the optimum (10 us): within 10 / 0.95.
  double random = 0, xgb = 0;
  const int seeds = 6;
  for (int s = 1; s <= seeds; ++s) {
    random += TrialsToReach("random", s, 10 / 0.95);
    xgb += TrialsToReach("xgb", s, 10 / 0.95);
  }
  random /= seeds;
  xgb /= seeds;
  std::printf("mean trials to 95%% of the best over %d seeds: random %.1f, xgb %.1f\n", seeds, random, xgb);
  EXPECT_LT(xgb, random * 0.6);
  EXPECT_EQ(TrialsToReach("grid", 1, 10 / 0.95), 4 * 16 + 11);  // (a=11,b=5) in odometer order
  EXPECT_FALSE(MakeSearchPolicy("annealing", Bump(), {}, {}).ok());
}

}  // namespace
}  // namespace opsched
