// opsched bench: the noise-aware verdict on synthetic measurements, and a real CPU run
// of a small suite through RunBench with its reports (JSON, Markdown, chart) and
// baselines (written, read back, merged across suites, judged).
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <random>
#include <sstream>

#include <google/protobuf/descriptor.h>
#include <google/protobuf/util/json_util.h>

#include "bench/lib/bench_runner.h"
#include "bench/lib/verdict.h"
#include "core/gpu/gpu_backend.h"
#include "tests/test_util.h"

namespace opsched::bench {
namespace {

std::vector<double> Noisy(double median, double spread, int n, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::normal_distribution<double> noise(0.0, spread);
  std::vector<double> v;
  for (int i = 0; i < n; ++i) v.push_back(median + noise(rng));
  return v;
}

TEST(VerdictTest, MedianAndItsOrderStatisticBounds) {
  std::vector<double> v;
  for (int i = 1; i <= 101; ++i) v.push_back(i);
  std::shuffle(v.begin(), v.end(), std::mt19937_64(3));
  const MedianEstimate m = EstimateMedian(v);
  EXPECT_EQ(m.median, 51);
  EXPECT_EQ(m.samples, 101);
  // ranks 50.5 -+ 0.98 * sqrt(101) ~ 40.7 and 60.3
  EXPECT_GE(m.low, 40);
  EXPECT_LE(m.low, 42);
  EXPECT_GE(m.high, 60);
  EXPECT_LE(m.high, 62);
}

TEST(VerdictTest, RealRegressionIsCaughtNoiseIsNot) {
  const double tolerance = 0.05;
  int caught = 0, false_alarms = 0;
  for (uint64_t seed = 0; seed < 50; ++seed) {
    // A real 20% regression with 3% noise.
    caught += Judge(EstimateMedian(Noisy(120, 3.6, 45, seed)), 100, tolerance) == Verdict::kRegression;
    // No change, 3% noise.
    false_alarms += Judge(EstimateMedian(Noisy(100, 3.0, 45, seed + 1000)), 100, tolerance) == Verdict::kRegression;
  }
  EXPECT_EQ(caught, 50);
  EXPECT_EQ(false_alarms, 0);
  // 8% slower than the baseline but with 30% noise: not a regression beyond the noise.
  EXPECT_NE(Judge(EstimateMedian(Noisy(108, 30, 15, 7)), 100, tolerance), Verdict::kRegression);
  // Faster beyond tolerance and noise: an improvement.
  EXPECT_EQ(Judge(EstimateMedian(Noisy(80, 1, 45, 8)), 100, tolerance), Verdict::kImprovement);
}

TEST(VerdictTest, TinyAbsoluteChangesAreNotRegressions) {
  // A launch-bound 7 µs op measured 6% slower on another host (6.6 -> 7.0 µs, tight
  // intervals): a relative regression, but within the 0.5 µs floor.
  const MedianEstimate tiny = EstimateMedian(Noisy(7.0, 0.05, 45, 3));
  EXPECT_EQ(Judge(tiny, 6.6, 0.05), Verdict::kRegression);
  EXPECT_EQ(Judge(tiny, 6.6, 0.05, 0.5), Verdict::kOk);
  // The floor does not hide a real regression of a larger op.
  EXPECT_EQ(Judge(EstimateMedian(Noisy(120, 1, 45, 4)), 100, 0.05, 0.5), Verdict::kRegression);
  // Nor of a small one that moves by more than the floor.
  EXPECT_EQ(Judge(EstimateMedian(Noisy(9.0, 0.5, 45, 5)), 6.6, 0.05, 0.5), Verdict::kRegression);
}

TEST(VerdictTest, MissingBaselineEntryIsReportedNotFailed) {
  EXPECT_EQ(Judge(EstimateMedian(Noisy(100, 1, 45, 1)), 0, 0.05), Verdict::kNew);
  EXPECT_STREQ(VerdictName(Verdict::kNew), "new");
}

std::string Read(const std::string& path) {
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// Options of a short run of `suite_text` on `target` in a fresh folder `name` of the
// test's temporary directory (the suite and the baseline live there).
BenchOptions ShortRun(const std::string& name, const std::string& suite_text, const Target& target, int rounds) {
  const std::string dir = ::testing::TempDir() + "/" + name;
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  BenchOptions o;
  o.suite_path = dir + "/suite.txt";
  std::ofstream(o.suite_path) << suite_text;
  o.target = target;
  o.baseline_path = dir + "/baseline.json";
  o.rounds = rounds;
  o.measure.min_repeats = 5;
  o.measure.max_repeats = 10;
  o.measure.warmups = 1;
  o.measure.min_total_ms = 1;
  o.measure.max_total_ms = 50;
  return o;
}

TEST(BenchRunTest, ReportsAndBaselinesOfACpuRun) {
  const std::string dir = ::testing::TempDir() + "/bench_test";
  BenchOptions o = ShortRun("bench_test",
                            "# two tiny workloads\n"
                            "scatter data=f32[64,8] indices=i64[64,8] updates=f32[64,8] axis=0 reduction=add\n"
                            "reduce x=f32[16,4,6,6] axes=0,2,3 op=sum\n",
                            CpuTarget(), 2);
  StatusOr<BenchReport> first = RunBench(Registry::Global(), o);
  ASSERT_TRUE(first.ok()) << first.status();
  ASSERT_EQ(first->entries_size(), 2);
  for (const BenchEntry& e : first->entries()) {
    EXPECT_EQ(e.verdict(), "new") << e.workload();  // no baseline yet: reported, not failed
    EXPECT_GT(e.tuned().median_us(), 0);
    EXPECT_LE(e.tuned().ci_low_us(), e.tuned().median_us());
    EXPECT_GT(e.wall_us(), 0);
    EXPECT_EQ(e.loop_device_us(), 0);  // a CPU run has no device loop to time
    EXPECT_EQ(e.host_us(), 0);         // nor a stream to hold
  }
  EXPECT_EQ(first->regressions(), 0);
  EXPECT_EQ(first->entries(1).line(), 3);
  EXPECT_NE(FormatTable(*first).find("reduce x=f32[16,4,6,6]"), std::string::npos);

  // Reports: JSON that parses back, Markdown, and the chart (an SVG when gnuplot is
  // installed, else its script and data).
  // Without gnuplot (a bare GPU host) the chart is not drawn: the reports say so with
  // FailedPrecondition and still leave everything else.
  const bool gnuplot = std::system("command -v gnuplot > /dev/null 2>&1") == 0;
  const Status reports = WriteReports(*first, dir + "/report");
  if (gnuplot) {
    OPSCHED_ASSERT_OK(reports);
  } else {
    EXPECT_TRUE(absl::IsFailedPrecondition(reports)) << reports;
  }
  BenchReport parsed;
  ASSERT_TRUE(google::protobuf::util::JsonStringToMessage(Read(dir + "/report/report.json"), &parsed).ok());
  EXPECT_EQ(parsed.entries_size(), 2);
  EXPECT_NE(Read(dir + "/report/report.md").find("| reduce"), std::string::npos);
  EXPECT_FALSE(Read(dir + "/report/speedups.gp").empty());
  EXPECT_FALSE(Read(dir + "/report/speedups.dat").empty());
  if (gnuplot) {
    EXPECT_NE(Read(dir + "/report/speedups.svg").find("<svg"), std::string::npos);
  } else {
    std::printf("gnuplot missing: speedups.svg not checked\n");
  }

  // Baselines: written, read back, and merged: a second suite keeps the first's entries.
  OPSCHED_ASSERT_OK(WriteBaseline(*first, o.baseline_path));
  BenchReport other = *first;
  other.mutable_entries()->DeleteSubrange(1, 1);
  other.mutable_entries(0)->set_workload("reduce x=f32[2,2] axes=0,1 op=max keepdims=false");
  OPSCHED_ASSERT_OK(WriteBaseline(other, o.baseline_path));
  StatusOr<Baseline> merged = LoadBaseline(o.baseline_path);
  ASSERT_TRUE(merged.ok()) << merged.status();
  EXPECT_EQ(merged->entries_size(), 3);

  // Judged against it: known entries now have a verdict other than new.
  StatusOr<BenchReport> second = RunBench(Registry::Global(), o);
  ASSERT_TRUE(second.ok()) << second.status();
  for (const BenchEntry& e : second->entries()) {
    EXPECT_NE(e.verdict(), "new") << e.workload();
    EXPECT_GT(e.baseline_us(), 0);
  }
  // Entries measured with an L2 flush (a GPU run's) are not compared with a run measured
  // otherwise (a CPU run has no flush): reported as new, not judged.
  BenchReport flushed = *first;
  flushed.set_l2_flush("read");
  OPSCHED_ASSERT_OK(WriteBaseline(flushed, o.baseline_path));
  StatusOr<BenchReport> third = RunBench(Registry::Global(), o);
  ASSERT_TRUE(third.ok()) << third.status();
  EXPECT_EQ(third->l2_flush(), "");
  for (const BenchEntry& e : third->entries()) {
    EXPECT_EQ(e.baseline_us(), 0) << e.workload();
    EXPECT_EQ(e.verdict(), "new") << e.workload();
  }
  // A gate (a baseline required) with no entry of its flush left fails as a missing
  // baseline would, rather than pass with nothing judged.
  BenchOptions gate = o;
  gate.require_baseline = true;
  const StatusOr<BenchReport> ungated = RunBench(Registry::Global(), gate);
  ASSERT_FALSE(ungated.ok());
  EXPECT_EQ(ungated.status().code(), StatusCode::kNotFound);
  EXPECT_NE(ungated.status().message().find("another L2 flush"), std::string::npos) << ungated.status();
  // A corrupt baseline is an error, not a silent pass.
  std::ofstream(o.baseline_path) << "{ not json";
  EXPECT_FALSE(RunBench(Registry::Global(), o).ok());
}

// On a GPU, the wall-time loop is also timed on the device, and the host cost of a call
// is measured with the stream held: well below the 30 ms hold, since no call waits for
// the device.
TEST(BenchRunTest, AGpuRunTimesTheLoopOnTheDeviceAndTheHostAlone) {
  if (gpu::DeviceCount() == 0) GTEST_SKIP() << "no GPU: " << gpu::NoDeviceReason();
  const BenchOptions o =
      ShortRun("bench_gpu_test",
               "reduce x=f32[1024,1024] axes=1 op=sum\n"
               "scatter data=f32[4096,64] indices=i64[4096,64] updates=f32[4096,64] axis=0 reduction=add\n",
               DefaultTarget(), 1);
  StatusOr<BenchReport> r = RunBench(Registry::Global(), o);
  ASSERT_TRUE(r.ok()) << r.status();
  ASSERT_EQ(r->entries_size(), 2);
  for (const BenchEntry& e : r->entries()) {
    EXPECT_GT(e.loop_device_us(), 0) << e.workload();
    EXPECT_GT(e.host_us(), 0) << e.workload();
    EXPECT_LT(e.host_us(), 500) << e.workload();  // 20 calls behind a 30 ms hold: none waited for it
    // The loop ends with a synchronisation: its wall time covers its device time.
    EXPECT_GE(e.wall_us(), 0.95 * e.loop_device_us()) << e.workload();
  }
}

// A report as RunBench makes it, without measuring: a conv2d_bias_act line with every
// figure, a scatter line with no heuristic, oracle or baseline, and a bad line.
BenchReport SyntheticReport() {
  BenchReport r;
  r.mutable_target()->set_device_name("NVIDIA H100 80GB HBM3");
  r.set_suite("suite.txt");
  r.set_tolerance_pct(5);
  auto timing = [](Timing* t, const char* impl, double median) {
    t->set_implementation(impl);
    t->set_config("-");
    t->set_median_us(median);
    t->set_ci_low_us(median * 0.9);
    t->set_ci_high_us(median * 1.1);
    t->set_samples(30);
  };
  BenchEntry* full = r.add_entries();
  full->set_line(2);
  full->set_op("conv2d_bias_act");
  full->set_workload("conv2d_bias_act x=f32[16,1,28,28] w=f32[16,1,3,3] b=f32[16] pad=1,1 act=relu");
  full->set_provenance("exact record");
  timing(full->mutable_tuned(), "conv2d_bias_act_cpu", 10);
  timing(full->mutable_heuristic(), "conv2d_bias_act_cpu_naive", 25);
  timing(full->mutable_oracle(), "conv2d_bias_act_cpu", 10);
  full->set_tuned_over_oracle(1);
  full->set_heuristic_over_oracle(2.5);
  full->set_speedup_over_heuristic(2.5);
  full->set_baseline_us(11);
  full->set_change(10.0 / 11);
  full->set_gbps(3);
  full->set_verdict("ok");
  BenchEntry* bare = r.add_entries();
  bare->set_line(3);
  bare->set_op("scatter");
  bare->set_workload("scatter data=f32[8] indices=i64[2] updates=f32[2] axis=0 reduction=add");
  bare->set_provenance("heuristic");
  timing(bare->mutable_tuned(), "scatter_cpu_sequential", 100);
  bare->set_gbps(1);
  bare->set_verdict("new");
  BenchEntry* bad = r.add_entries();
  bad->set_line(4);
  bad->set_workload("scatter nonsense");
  bad->set_bad_line(true);
  bad->set_verdict("error");
  bad->set_message("suite.txt:4: column 9: expected name=value");
  OpSummary* conv = r.add_ops();
  conv->set_op("conv2d_bias_act");
  conv->set_workloads(1);
  conv->set_geomean_tuned_over_oracle(1);
  conv->set_geomean_heuristic_over_oracle(2.5);
  conv->set_geomean_speedup_over_heuristic(2.5);
  OpSummary* scatter = r.add_ops();  // no oracle, no heuristic: no geometric means
  scatter->set_op("scatter");
  scatter->set_workloads(1);
  return r;
}

// The first line of `text` that starts with `start` (empty when none does).
std::string LineStarting(const std::string& text, const std::string& start) {
  std::istringstream in(text);
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind(start, 0) == 0) return line;
  }
  return "";
}

TEST(BenchReportTest, MissingFiguresAreDashesAndTheChartSkipsTheirBars) {
  const std::string dir = ::testing::TempDir() + "/bench_synthetic";
  std::filesystem::remove_all(dir);
  const bool gnuplot = std::system("command -v gnuplot > /dev/null 2>&1") == 0;
  const Status written = WriteReports(SyntheticReport(), dir);
  if (gnuplot) {
    OPSCHED_ASSERT_OK(written);
  } else {
    EXPECT_TRUE(absl::IsFailedPrecondition(written)) << written;
  }
  // report.md: "-" where there is no heuristic, oracle or baseline, never a 0.00.
  const std::string md = Read(dir + "/report.md");
  const std::string bare = LineStarting(md, "| 3 |");
  ASSERT_FALSE(bare.empty()) << md;
  EXPECT_EQ(bare,
            "| 3 | `scatter data=f32[8] indices=i64[2] updates=f32[2] axis=0 reduction=add` | scatter_cpu_sequential "
            "`-` | heuristic | 100.00 | - | - | - | - | 1 | - | - | new |");
  EXPECT_NE(LineStarting(md, "| 2 |").find("| 10.00 | 25.00 | 10.00 | 1.000 | 2.500 | 3 | 11.00 | 0.909 | ok |"),
            std::string::npos)
      << md;
  EXPECT_EQ(LineStarting(md, "| scatter |"), "| scatter | 1 | - | - | - |") << md;
  EXPECT_EQ(LineStarting(md, "| conv2d_bias_act |"), "| conv2d_bias_act | 1 | 1.000 | 2.500 | 2.50x |") << md;

  // The chart's data: an escaped label, the confidence intervals, NaN (no bar) for what
  // was not measured; the bad line has no row.
  const std::string data = Read(dir + "/speedups.dat");
  const std::string conv = LineStarting(data, "0 ");
  EXPECT_EQ(conv,
            "0 2.5000 2.0455 3.0556 1.0000 0.8182 1.2222 10.0000 9.0000 11.0000 25.0000 22.5000 27.5000 10.0000 "
            "9.0000 11.0000 \"conv2d\\\\_bias\\\\_act:2\"");
  EXPECT_EQ(LineStarting(data, "1 "),
            "1 NaN NaN NaN NaN NaN NaN 100.0000 90.0000 110.0000 NaN NaN NaN NaN NaN NaN \"scatter:3\"");
  EXPECT_EQ(LineStarting(data, "2 "), "");
  // The script names its files relative to its own folder, and keeps the legend outside.
  const std::string script = Read(dir + "/speedups.gp");
  EXPECT_EQ(script.find(dir), std::string::npos) << script;
  EXPECT_NE(script.find("set output \"speedups.svg\""), std::string::npos) << script;
  EXPECT_NE(script.find("set key outside"), std::string::npos) << script;
  EXPECT_NE(script.find("yerrorbars"), std::string::npos) << script;
  EXPECT_NE(script.find("NVIDIA H100 80GB HBM3"), std::string::npos) << script;
  if (!gnuplot) {
    std::printf("gnuplot missing: the drawn chart not checked\n");
    return;
  }
  // Underscores print as themselves (not as subscripts), and the script runs from a copy
  // of its folder anywhere.
  EXPECT_NE(Read(dir + "/speedups.svg").find(">conv2d_bias_act:2<"), std::string::npos);
  const std::string moved = ::testing::TempDir() + "/bench_synthetic_moved";
  std::filesystem::remove_all(moved);
  std::filesystem::create_directories(moved);
  for (const char* name : {"speedups.gp", "speedups.dat"}) {
    std::filesystem::copy_file(dir + "/" + name, moved + "/" + name);
  }
  ASSERT_EQ(std::system(("cd '" + moved + "' && gnuplot speedups.gp").c_str()), 0);
  EXPECT_NE(Read(moved + "/speedups.svg").find("<svg"), std::string::npos);
}

TEST(BenchReportTest, TheTableFitsItsWidthUnlessWide) {
  const BenchReport r = SyntheticReport();
  auto widest = [](const std::string& text) {
    size_t most = 0;
    std::istringstream in(text);
    std::string line;
    while (std::getline(in, line)) {
      if (line.rfind("conv2d", 0) == 0 || line.rfind("scatter", 0) == 0 || line.find("regression(s)") != std::string::npos) {
        continue;  // the summary lines after the table
      }
      most = std::max(most, DisplayWidth(line));
    }
    return most;
  };
  const std::string narrow = FormatTable(r);
  EXPECT_LE(widest(narrow), kTableWidth) << narrow;
  EXPECT_NE(narrow.find("verdict"), std::string::npos) << narrow;
  EXPECT_NE(narrow.find("conv2d_bias_act_cpu"), std::string::npos) << narrow;
  EXPECT_NE(narrow.find("   4  scatter nonsense"), std::string::npos) << narrow;
  EXPECT_NE(narrow.find("error: suite.txt:4: column 9: expected name=value"), std::string::npos) << narrow;
  const std::string wide = FormatTable(r, 0);
  EXPECT_GT(widest(wide), kTableWidth) << wide;
  for (const char* header : {"wall us", "loop dev us", "host us", "heur. us", "oracle us", "h/oracle", "provenance", "baseline"}) {
    EXPECT_NE(wide.find(header), std::string::npos) << header;
  }
  EXPECT_NE(wide.find("conv2d_bias_act x=f32[16,1,28,28] w=f32[16,1,3,3] b=f32[16] pad=1,1 act=relu"),
            std::string::npos)
      << wide;
  EXPECT_EQ(narrow.find("conv2d_bias_act x=f32[16,1,28,28] w=f32[16,1,3,3] b=f32[16] pad=1,1 act=relu"),
            std::string::npos)
      << narrow;
}

// docs/bench.md names every field of report.json and of a baseline exactly as the writer
// writes them (the proto's own names), and none by the lowerCamelCase JSON name it is not
// written with.
TEST(BenchDocsTest, BenchMdNamesTheJsonFieldsAsWritten) {
  const char* root = std::getenv("TEST_SRCDIR");
  const std::string docs = Read(std::string(root ? root : ".") + "/opsched/docs/bench.md");
  ASSERT_FALSE(docs.empty()) << "docs/bench.md not found in the runfiles";
  const std::string dir = ::testing::TempDir() + "/bench_docs";
  std::filesystem::remove_all(dir);
  const BenchReport report = SyntheticReport();
  (void)WriteReports(report, dir);  // the chart may not be drawn here; the JSON is written first
  const std::string json = Read(dir + "/report.json");
  ASSERT_FALSE(json.empty());
  OPSCHED_ASSERT_OK(WriteBaseline(report, dir + "/baseline.json"));
  const std::string baseline = Read(dir + "/baseline.json");
  auto check = [&](const google::protobuf::Descriptor* message, const std::string& written) {
    for (int i = 0; i < message->field_count(); ++i) {
      const google::protobuf::FieldDescriptor* field = message->field(i);
      EXPECT_NE(written.find("\"" + field->name() + "\":"), std::string::npos)
          << message->name() << "." << field->name() << " is not written under its own name";
      const std::string named = field->is_repeated() && field->message_type() != nullptr ? "[]`" : "`";
      EXPECT_NE(docs.find("`" + field->name() + named), std::string::npos)
          << "docs/bench.md does not name " << message->name() << "." << field->name();
      if (field->json_name() != field->name()) {
        EXPECT_EQ(docs.find("`" + field->json_name() + "`"), std::string::npos)
            << "docs/bench.md names " << field->json_name() << ", which the writer never writes";
      }
    }
  };
  check(BenchReport::descriptor(), json);
  check(BenchEntry::descriptor(), json);
  check(Timing::descriptor(), json);
  check(OpSummary::descriptor(), json);
  check(records::TargetProto::descriptor(), json);
  check(Baseline::descriptor(), baseline);
  check(BaselineEntry::descriptor(), baseline);
}

}  // namespace
}  // namespace opsched::bench
