// The opsched command line as a new user meets it: hostile arguments and inputs give a
// clear error and a meaningful exit status, never a crash or a silently wrong answer.
#include <sys/wait.h>

#include <cstdio>
#include <cstdlib>
#include <regex>
#include <sstream>
#include <string>

#include <gtest/gtest.h>

#include "core/format.h"
#include "core/table.h"
#include "records/log_writer.h"
#include "tests/records/record_factory.h"
#include "tests/test_files.h"

namespace opsched {
namespace {

using namespace ::opsched::testing;  // the helpers of tests/test_files.h

struct Result {
  int code = -1;  // the exit status; 128 + N when killed by signal N
  std::string out;
  std::string err;
};

// Runs `opsched ARGS` (ARGS as the shell reads them).
Result Opsched(const std::string& args) {
  const char* root = std::getenv("TEST_SRCDIR");
  const std::string binary = std::string(root ? root : ".") + "/opsched/tools/opsched";
  const std::string out = TempPath("cli_stdout.txt");
  const std::string err = TempPath("cli_stderr.txt");
  const int status = std::system(fmt::format("{} {} >{} 2>{}", binary, args, out, err).c_str());
  Result r;
  if (WIFEXITED(status)) r.code = WEXITSTATUS(status);
  if (WIFSIGNALED(status)) r.code = 128 + WTERMSIG(status);
  r.out = ReadBytes(out);
  r.err = ReadBytes(err);
  return r;
}

std::string Suite(const std::string& name, const std::string& text) {
  const std::string path = TempPath(name);
  WriteBytes(path, text);
  return path;
}

TEST(CliTest, TuneRefusesTimeoutsNoCandidateCouldMeet) {
  const std::string suite = Suite("t.txt", "reduce x=f32[16,16] axes=1 op=sum\n");
  const std::string log = TempPath("t.log");
  for (const char* timeout : {"0.001", "-1", "0", "nan", "inf", "1e300", "soon"}) {
    Result r = Opsched(fmt::format("tune --suite {} --records {} --target cpu --timeout {} --no-progress",
                                   suite, log, timeout));
    EXPECT_EQ(r.code, 2) << timeout << ": " << r.err;
    EXPECT_NE(r.err.find("--timeout"), std::string::npos) << timeout << ": " << r.err;
    EXPECT_FALSE(std::ifstream(log).good()) << timeout << ": nothing may be logged";
  }
  Result shorter = Opsched(fmt::format("tune --suite {} --records {} --target cpu --timeout 2 --min-time-ms 5000 "
                                       "--no-progress",
                                       suite, log));
  EXPECT_EQ(shorter.code, 2) << shorter.err;
  EXPECT_NE(shorter.err.find("every candidate would time out"), std::string::npos) << shorter.err;
  Result verify = Opsched(fmt::format("tune --suite {} --records {} --target cpu --verify gpu --no-progress", suite, log));
  EXPECT_EQ(verify.code, 2) << verify.err;
  EXPECT_NE(verify.err.find("--verify"), std::string::npos) << verify.err;
  EXPECT_FALSE(std::ifstream(log).good()) << "nothing may be logged";
  for (const char* timeout : {"0", "-1", "nan", "1", "1e300", "soon"}) {
    Result r = Opsched(fmt::format("tune --mpi --suite {} --records {} --target cpu --heartbeat-timeout {} "
                                   "--no-progress",
                                   suite, log, timeout));
    EXPECT_EQ(r.code, 2) << timeout << ": " << r.err;
    EXPECT_NE(r.err.find("--heartbeat-timeout"), std::string::npos) << timeout << ": " << r.err;
    EXPECT_FALSE(std::ifstream(log).good()) << timeout << ": nothing may be logged";
  }
}

TEST(CliTest, OversizedShapesAreRefusedWithoutACrash) {
  const char* huge = "scatter data=f32[99999999999,99999999999] indices=i64[1,1] updates=f32[1,1] axis=0";
  Result explain = Opsched(fmt::format("explain '{}' --target cpu", huge));
  EXPECT_EQ(explain.code, 1) << explain.err;
  EXPECT_NE(explain.err.find("holds more than"), std::string::npos) << explain.err;
  Result stride = Opsched("explain 'reduce x=f32[4]:[4611686018427387904] axes=0 op=sum' --target cpu");
  EXPECT_EQ(stride.code, 1) << stride.err;
  EXPECT_NE(stride.err.find("stride 0"), std::string::npos) << stride.err;
  Result cube = Opsched("explain 'reduce x=f32[4294967296,4294967296,4294967296] axes=0 op=sum' --target cpu");
  EXPECT_EQ(cube.code, 1) << cube.err;
  EXPECT_EQ(cube.err.find("overlapping"), std::string::npos) << cube.err;

  // bench: the oversized line is a bad line (exit 2); a valid workload no host can hold
  // (2^48 bytes) is a clear error of that entry (exit 1), not std::bad_alloc (exit 134).
  const std::string baseline = TempPath("huge_baseline.json");
  const std::string suite = Suite("huge.txt", std::string(huge) + "\n");
  Result bad = Opsched(fmt::format("bench --suite {} --target cpu --baseline {} --update-baseline", suite, baseline));
  EXPECT_EQ(bad.code, 2) << bad.out << bad.err;
  const std::string big = Suite("big.txt", "reduce x=f32[8388608,8388608] axes=0 op=sum\n");
  Result memory = Opsched(fmt::format("bench --suite {} --target cpu --baseline {} --update-baseline", big, baseline));
  EXPECT_EQ(memory.code, 1) << memory.out << memory.err;
  EXPECT_NE(memory.out.find("of host memory"), std::string::npos) << memory.out;
}

TEST(CliTest, BenchFailsWhenItMeasuredNothingOrHasNoBaseline) {
  const std::string baseline = TempPath("gate_baseline.json");
  const std::string all_bad = Suite("all_bad.txt", "reduce x=f32[4] axes=9 op=sum\nscatter nonsense\n");
  Result bad = Opsched(fmt::format("bench --suite {} --target cpu --baseline {} --update-baseline", all_bad, baseline));
  EXPECT_EQ(bad.code, 2) << bad.out << bad.err;
  EXPECT_NE(bad.err.find("2 bad line(s) in the suite"), std::string::npos) << bad.err;
  Result directory = Opsched(fmt::format("bench --suite {} --target cpu --baseline {} --update-baseline",
                                         TempDir(), baseline));
  EXPECT_EQ(directory.code, 2) << directory.err;
  EXPECT_NE(directory.err.find("is not a regular file"), std::string::npos) << directory.err;
  const std::string empty = Suite("empty.txt", "# nothing here\n\n");
  Result none = Opsched(fmt::format("bench --suite {} --target cpu --baseline {} --update-baseline", empty, baseline));
  EXPECT_EQ(none.code, 2) << none.err;
  const std::string good = Suite("good.txt", "reduce x=f32[16,4] axes=1 op=sum\n");
  Result missing = Opsched(fmt::format("bench --suite {} --target cpu --baseline {} --rounds 1 --min-time-ms 1",
                                       good, TempPath("missing_baseline.json")));
  EXPECT_EQ(missing.code, 2) << missing.out << missing.err;
  EXPECT_NE(missing.err.find("no baseline at"), std::string::npos) << missing.err;
  EXPECT_NE(missing.err.find("--update-baseline"), std::string::npos) << missing.err;
}

TEST(CliTest, TuneMeasuresOnlyTheImplementationsItIsGiven) {
  const std::string suite = Suite("only.txt", "reduce x=f32[300000] axes=0 op=sum\n");
  const std::string log = TempPath("only.log");
  Result tune = Opsched(fmt::format("tune --suite {} --records {} --target cpu --policy grid --trials 50 "
                                    "--min-time-ms 1 --no-progress --implementations reduce_cpu_parallel",
                                    suite, log));
  ASSERT_EQ(tune.code, 0) << tune.out << tune.err;
  Result shown = Opsched(fmt::format("records show {} --limit 0 --wide", log));
  ASSERT_EQ(shown.code, 0) << shown.err;
  EXPECT_NE(shown.out.find("reduce_cpu_parallel"), std::string::npos) << shown.out;
  EXPECT_EQ(shown.out.find("reduce_cpu_sequential"), std::string::npos) << shown.out;

  Result unknown = Opsched(fmt::format("tune --suite {} --records {} --target cpu --no-progress "
                                       "--implementations reduce_cpu_parallel no_such_kernel",
                                       suite, TempPath("unknown.log")));
  EXPECT_EQ(unknown.code, 2) << unknown.out << unknown.err;
  EXPECT_NE(unknown.err.find("--implementations: no implementation 'no_such_kernel'"), std::string::npos)
      << unknown.err;
}

TEST(CliTest, ANulByteInASuiteLineIsReportedEscaped) {
  const std::string suite =
      Suite("nul.txt", std::string("reduce x=f32[4]") + '\0' + " axes=0 op=sum\nreduce x=f32[16,4] axes=1 op=sum\n");
  Result tune = Opsched(fmt::format("tune --suite {} --records {} --target cpu --policy random --trials 2 "
                                    "--min-time-ms 1 --no-progress",
                                    suite, TempPath("nul.log")));
  EXPECT_EQ(tune.code, 2) << tune.err;
  EXPECT_NE(tune.err.find(suite + ":1: column 16: control character 0x00"), std::string::npos) << tune.err;
  EXPECT_EQ(tune.err.find('\0'), std::string::npos);
  Result bench = Opsched(fmt::format("bench --suite {} --target cpu --baseline {} --update-baseline --rounds 1 "
                                     "--min-time-ms 1",
                                     suite, TempPath("nul_baseline.json")));
  EXPECT_EQ(bench.code, 2) << bench.err;  // a bad line
  EXPECT_NE(bench.err.find(suite + ":1: column 16: control character 0x00"), std::string::npos) << bench.err;
  EXPECT_EQ(bench.err.find('\0'), std::string::npos);
}

TEST(CliTest, ABadSuiteLineStopsTuneAndBenchBeforeAnythingIsMeasured) {
  // The bad line comes after a good one: nothing of the good one may be measured either.
  const std::string suite = Suite("late_bad.txt",
                                  "# a suite\nreduce x=f32[16,4] axes=1 op=sum\n\nreduce x=f32[4] axes=7 op=sum\n"
                                  "scatter data=f32[8] indices=i64[2] updates=f32[2] axis=0 reduction=add\n"
                                  "reduce nonsense\n");
  const std::string log = TempPath("late_bad.log");
  Result tune = Opsched(fmt::format("tune --suite {} --records {} --target cpu --policy random --trials 2 "
                                    "--min-time-ms 1",
                                    suite, log));
  EXPECT_EQ(tune.code, 2) << tune.err;
  EXPECT_NE(tune.err.find(suite + ":4: "), std::string::npos) << tune.err;
  EXPECT_NE(tune.err.find(suite + ":6: "), std::string::npos) << tune.err;
  EXPECT_EQ(tune.err.find(suite + ":2: "), std::string::npos) << tune.err;
  EXPECT_NE(tune.err.find("opsched tune: 2 bad line(s) in the suite"), std::string::npos) << tune.err;
  EXPECT_EQ(tune.err.find("ETA"), std::string::npos) << "no progress: nothing was tuned\n" << tune.err;
  EXPECT_EQ(tune.out, "");
  EXPECT_FALSE(std::ifstream(log).good()) << "nothing may be logged";

  const std::string report = TempPath("late_bad_report");
  const std::string baseline = TempPath("late_bad_baseline.json");
  Result bench = Opsched(fmt::format("bench --suite {} --target cpu --baseline {} --update-baseline --report {} "
                                     "--rounds 1 --min-time-ms 1",
                                     suite, baseline, report));
  EXPECT_EQ(bench.code, 2) << bench.err;
  EXPECT_NE(bench.err.find(suite + ":4: "), std::string::npos) << bench.err;
  EXPECT_NE(bench.err.find(suite + ":6: "), std::string::npos) << bench.err;
  EXPECT_NE(bench.err.find("opsched bench: 2 bad line(s) in the suite"), std::string::npos) << bench.err;
  EXPECT_EQ(bench.out, "");
  EXPECT_FALSE(std::ifstream(baseline).good()) << "no baseline may be written";
  EXPECT_FALSE(std::ifstream(report + "/report.json").good()) << "no report may be written";
}

TEST(CliTest, RecordsOfAnotherDeviceAreNotIgnoredSilently) {
  const char* line = "reduce x=f32[16,4] axes=1 op=sum";
  const std::string log = TempPath("other_device.log");
  {
    StatusOr<std::unique_ptr<records::LogWriter>> writer = records::LogWriter::Open(log);
    ASSERT_TRUE(writer.ok()) << writer.status();
    const Target gpu = records::testing::TestGpu();
    for (double us : {5.0, 7.0}) {
      ASSERT_TRUE((*writer)->Append(records::testing::MakeRecord(line, gpu, "reduce_cuda_rows", "-", us)).ok());
    }
  }
  const std::string expected = "2 records loaded, none for this target (fingerprint ";
  Result explain = Opsched(fmt::format("explain --records {} --target cpu '{}'", log, line));
  EXPECT_EQ(explain.code, 0) << explain.err;
  EXPECT_NE(explain.err.find("opsched explain: " + expected), std::string::npos) << explain.err;
  EXPECT_NE(explain.err.find("they are for: cuda NVIDIA H200 sm_90"), std::string::npos) << explain.err;
  Result bench = Opsched(fmt::format("bench --suite {} --records {} --target cpu --baseline {} --update-baseline "
                                     "--rounds 1 --min-time-ms 1 --no-progress",
                                     Suite("other_device.txt", std::string(line) + "\n"), log,
                                     TempPath("other_device_baseline.json")));
  EXPECT_EQ(bench.code, 0) << bench.err;
  EXPECT_NE(bench.err.find("opsched bench: " + expected), std::string::npos) << bench.err;

  // Records of this target: nothing to say.
  const std::string own = TempPath("own_device.log");
  Result tune = Opsched(fmt::format("tune --suite {} --records {} --target cpu --policy random --trials 1 "
                                    "--min-time-ms 1 --no-progress",
                                    Suite("own_device.txt", std::string(line) + "\n"), own));
  ASSERT_EQ(tune.code, 0) << tune.err;
  Result served = Opsched(fmt::format("explain --records {} --target cpu '{}'", own, line));
  EXPECT_EQ(served.code, 0) << served.err;
  EXPECT_EQ(served.err.find("none for this target"), std::string::npos) << served.err;
}

TEST(CliTest, BenchShowsTunesProgressLineWithAnEta) {
  const std::string suite = Suite("progress.txt", "reduce x=f32[16,4] axes=1 op=sum\nreduce x=f32[8,8] axes=0 op=max\n");
  Result bench = Opsched(fmt::format("bench --suite {} --target cpu --baseline {} --update-baseline --rounds 2 "
                                     "--min-time-ms 1",
                                     suite, TempPath("progress_baseline.json")));
  EXPECT_EQ(bench.code, 0) << bench.err;
  // stderr is not a terminal here: the progress line is printed as plain lines.
  EXPECT_NE(bench.err.find("[1/2] reduce x=f32[16,4] axes=1 op=sum"), std::string::npos) << bench.err;
  EXPECT_NE(bench.err.find("/2 rounds"), std::string::npos) << bench.err;
  EXPECT_NE(bench.err.find(", ETA "), std::string::npos) << bench.err;
  EXPECT_NE(bench.err.find("[2/2] reduce x=f32[8,8] axes=0 op=max keepdims=false: "), std::string::npos) << bench.err;
  Result quiet = Opsched(fmt::format("bench --suite {} --target cpu --baseline {} --update-baseline --rounds 1 "
                                     "--min-time-ms 1 --no-progress",
                                     suite, TempPath("progress_baseline.json")));
  EXPECT_EQ(quiet.code, 0) << quiet.err;
  EXPECT_EQ(quiet.err.find("ETA"), std::string::npos) << quiet.err;
}

// The line of `help` that describes `option` (empty when none does).
std::string OptionLine(const std::string& help, const std::string& option) {
  std::istringstream in(help);
  std::string line;
  while (std::getline(in, line)) {
    const size_t at = line.find(option);
    if (at != std::string::npos && (at + option.size() == line.size() || line[at + option.size()] == ' ' ||
                                    line[at + option.size()] == '=')) {
      return line;
    }
  }
  return "";
}

TEST(CliTest, HelpShowsEveryDefault) {
  struct Expected {
    const char* command;
    const char* option;
    const char* shown;
  };
  for (const Expected& e : std::vector<Expected>{{"tune", "--policy", "=xgb"},
                                                 {"tune", "--trials", "=64"},
                                                 {"tune", "--timeout", "=60"},
                                                 {"tune", "--l2-flush", "=read"},
                                                 {"bench", "--l2-flush", "=read"},
                                                 {"bench", "--tolerance", "=5"},
                                                 {"bench", "--min-change-us", "=0.5"},
                                                 {"bench", "--rounds", "=3"},
                                                 {"bench", "--min-time-ms", "=20"},
                                                 {"records compact", "--keep", "=3"},
                                                 {"records show", "--limit", "=50"},
                                                 {"records best", "--limit", "=50"},
                                                 {"study", "--seeds", "=5"},
                                                 {"study", "--within", "=0.95"},
                                                 {"ops", "--target", "=cpu"}}) {
    Result help = Opsched(fmt::format("{} --help", e.command));
    EXPECT_EQ(help.code, 0) << e.command << ": " << help.err;
    const std::string line = OptionLine(help.out, e.option);
    EXPECT_NE(line.find(e.shown), std::string::npos) << e.command << " " << e.option << ": '" << line << "'";
  }
}

TEST(CliTest, AnUnknownL2FlushIsRefusedBeforeAnythingRuns) {
  const std::string suite = Suite("flush.txt", "reduce x=f32[16,4] axes=1 op=sum\n");
  const std::string log = TempPath("flush.log");
  for (const std::string& command : {"tune --records " + log, std::string("bench")}) {
    Result r = Opsched(fmt::format("{} --suite {} --target cpu --l2-flush fill", command, suite));
    EXPECT_NE(r.code, 0) << command;
    EXPECT_NE(r.err.find("--l2-flush"), std::string::npos) << command << ": " << r.err;
    EXPECT_NE(r.err.find("fill"), std::string::npos) << command << ": " << r.err;
  }
  EXPECT_FALSE(std::ifstream(log).good()) << "nothing may be logged";
}

TEST(CliTest, VersionSaysWhatWasBuiltFromAndWith) {
  Result version = Opsched("--version");
  EXPECT_EQ(version.code, 0) << version.err;
  // The commit comes from Bazel's workspace status; "unknown" only outside a git checkout.
  const std::regex expected(
      "opsched [0-9]+\\.[0-9]+\\.[0-9]+\n"
      "git commit ([0-9a-f]{12,}(-dirty)?|unknown)\n"
      "built with CUDA (none|[0-9]+\\.[0-9]+), cuDNN (none|[0-9]+\\.[0-9]+\\.[0-9]+), cuBLAS (none|[0-9]+\\.[0-9]+\\.[0-9]+)\n");
  EXPECT_TRUE(std::regex_match(version.out, expected)) << version.out;
}

size_t WidestLine(const std::string& text) {
  std::istringstream in(text);
  std::string line;
  size_t most = 0;
  while (std::getline(in, line)) most = std::max(most, DisplayWidth(line));
  return most;
}

TEST(CliTest, TablesFit120ColumnsUnlessWide) {
  const std::string line =
      "scatter data=f32[1000,256,7,7] indices=i64[1000,256,7,7] updates=f32[1000,256,7,7] axis=0 reduction=add";
  const std::string log = TempPath("wide.log");
  {
    StatusOr<std::unique_ptr<records::LogWriter>> writer = records::LogWriter::Open(log);
    ASSERT_TRUE(writer.ok()) << writer.status();
    const Target gpu = records::testing::TestGpu();
    ASSERT_TRUE((*writer)->Append(records::testing::MakeRecord(line, gpu, "scatter_cuda_privatized_atomic",
                                                               "block=256,items=4", 12.5))
                    .ok());
  }
  for (const char* command : {"show", "best"}) {
    Result narrow = Opsched(fmt::format("records {} {}", command, log));
    EXPECT_EQ(narrow.code, 0) << narrow.err;
    EXPECT_LE(WidestLine(narrow.out), kTableWidth) << narrow.out;
    EXPECT_NE(narrow.out.find("scatter_cuda_privatized_atomic"), std::string::npos) << narrow.out;
    EXPECT_NE(narrow.out.find("12.50"), std::string::npos) << narrow.out;
    EXPECT_NE(narrow.out.find("..."), std::string::npos) << narrow.out;
    Result wide = Opsched(fmt::format("records {} {} --wide", command, log));
    EXPECT_EQ(wide.code, 0) << wide.err;
    EXPECT_GT(WidestLine(wide.out), kTableWidth) << wide.out;
    EXPECT_NE(wide.out.find(line), std::string::npos) << wide.out;
    EXPECT_NE(wide.out.find("NVIDIA H200 sm_90"), std::string::npos) << wide.out;
  }
  // ops: the config spaces of a workload are the long column.
  Result ops = Opsched("ops --workload 'reduce x=f32[64,16,28,28] axes=0,2,3 op=sum'");
  EXPECT_EQ(ops.code, 0) << ops.err;
  EXPECT_LE(WidestLine(ops.out), kTableWidth) << ops.out;
  Result ops_wide = Opsched("ops --wide --workload 'reduce x=f32[64,16,28,28] axes=0,2,3 op=sum'");
  EXPECT_EQ(ops_wide.code, 0) << ops_wide.err;
  // (This table fits 120 columns either way; the tables above show --wide adding width.)
  EXPECT_NE(ops_wide.out.find("reduce_cpu_parallel"), std::string::npos) << ops_wide.out;
}

TEST(CliTest, StudyWarnsWhenTheLogIsNotExhaustive) {
  const char* line = "reduce x=f32[16,4] axes=1 op=sum";
  const std::string suite = Suite("study.txt", std::string(line) + "\n");
  const std::string log = TempPath("study.log");
  auto tune = [&](std::string_view policy, int trials) {
    return Opsched(fmt::format("tune --suite {} --records {} --target cpu --policy {} --trials {} --min-time-ms 1 "
                               "--no-progress",
                               suite, log, policy, trials));
  };
  Result partial = tune("random", 2);
  ASSERT_EQ(partial.code, 0) << partial.err;
  Result warned = Opsched(fmt::format("study --records {} --workload '{}' --seeds 2", log, line));
  EXPECT_EQ(warned.code, 0) << warned.err;
  EXPECT_NE(warned.err.find(fmt::format("opsched study: warning: {} hold 2 of the ", log)), std::string::npos)
      << warned.err;
  EXPECT_NE(warned.err.find("not an exhaustive run"), std::string::npos) << warned.err;
  EXPECT_NE(warned.out.find("measured candidates on"), std::string::npos) << warned.out;
  // Every legal candidate measured: nothing to warn about.
  Result all = tune("grid", 100000);
  ASSERT_EQ(all.code, 0) << all.err;
  Result exhaustive = Opsched(fmt::format("study --records {} --workload '{}' --seeds 2", log, line));
  EXPECT_EQ(exhaustive.code, 0) << exhaustive.err;
  EXPECT_EQ(exhaustive.err.find("warning"), std::string::npos) << exhaustive.err;
}

// `records train` writes the trees alone (format 2) unless asked to keep XGBoost's own
// model too; both files decide and predict alike, and the compact one is the smaller.
TEST(CliTest, TrainWritesTheTreesAloneUnlessAskedToKeepXgboostsModel) {
  std::string lines;
  for (int rows : {64, 256, 1024, 4096}) lines += fmt::format("reduce x=f32[{},48] axes=1 op=sum\n", rows);
  const std::string suite = Suite("train.txt", lines);
  const std::string log = TempPath("train.log");
  Result tuned = Opsched(fmt::format("tune --suite {} --records {} --target cpu --policy random --trials 6 "
                                     "--min-time-ms 1 --no-progress",
                                     suite, log));
  ASSERT_EQ(tuned.code, 0) << tuned.err;
  const std::string compact = TempPath("compact.opsm"), kept = TempPath("kept.opsm");
  Result a = Opsched(fmt::format("records train --records {} --kind cpu --rounds 20 --depth 4 -o {}", log, compact));
  ASSERT_EQ(a.code, 0) << a.err;
  Result b = Opsched(
      fmt::format("records train --records {} --kind cpu --rounds 20 --depth 4 --keep-xgboost -o {}", log, kept));
  ASSERT_EQ(b.code, 0) << b.err;
  const std::string small = ReadBytes(compact), large = ReadBytes(kept);
  ASSERT_GE(small.size(), 24u);
  EXPECT_EQ(small[8], 2) << "format version";
  EXPECT_GT(large.size(), 2 * small.size());
  const std::string untuned = "reduce x=f32[700,48] axes=1 op=sum";
  Result x = Opsched(fmt::format("explain '{}' --target cpu --model {}", untuned, compact));
  Result y = Opsched(fmt::format("explain '{}' --target cpu --model {}", untuned, kept));
  ASSERT_EQ(x.code, 0) << x.err;
  ASSERT_EQ(y.code, 0) << y.err;
  EXPECT_NE(x.out.find("predicted"), std::string::npos) << x.out;
  EXPECT_EQ(x.err.find("deciding without it"), std::string::npos) << x.err;
  EXPECT_EQ(y.err.find("deciding without it"), std::string::npos) << y.err;
  EXPECT_EQ(x.out, y.out);
}

}  // namespace
}  // namespace opsched
