// OPSCHED_RECORD_UNTUNED: the Runtime writes every workload served without an exact
// record once, as a suite that `opsched tune --suite FILE` reads as it is.
#include "opsched/untuned_recorder.h"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdio>
#include <thread>

#include "opsched/runtime.h"
#include "records/log_writer.h"
#include "tests/records/record_factory.h"
#include "tests/strategies/test_op.h"
#include "tests/test_files.h"
#include "tests/test_util.h"
#include "tuner/suite.h"

namespace opsched {
namespace {

using testing::ReadBytes;
using testing::TempPath;
using testing::WriteBytes;

// The workload lines of a suite file (comments and blank lines left out).
std::vector<std::string> Lines(const std::string& path) {
  std::vector<std::string> out;
  std::string bytes = ReadBytes(path);
  for (size_t start = 0; start < bytes.size();) {
    size_t end = bytes.find('\n', start);
    if (end == std::string::npos) end = bytes.size();
    std::string line = bytes.substr(start, end - start);
    if (!line.empty() && line[0] != '#') out.push_back(line);
    start = end + 1;
  }
  return out;
}

class UntunedRecorderTest : public ::testing::Test {
 protected:
  UntunedRecorderTest() { testing::RegisterScaleOp(&registry_, &runs_); }

  StatusOr<std::unique_ptr<Runtime>> Make(const std::string& untuned, std::vector<std::string> records = {}) {
    RuntimeOptions o;
    o.target = CpuTarget();
    o.registry = &registry_;
    o.record_files = std::move(records);
    o.record_untuned_file = untuned;
    return Runtime::Create(std::move(o));
  }
  Status RunScale(Runtime& rt, const std::string& line) {
    Workload w = *ParseWorkload(line);
    const int64_t n = w.tensors()[0].desc.numel();
    std::vector<float> x(n, 1.0f), y(n);
    Tensor tensors[] = {
        Tensor{TensorDesc::Contiguous(DType::kF32, {n}), x.data(), Device::Cpu()},
        Tensor{TensorDesc::Contiguous(DType::kF32, {n}), y.data(), Device::Cpu()}};
    return rt.Run(w, tensors, Stream::Wrap(Device::Cpu(), nullptr));
  }

  Registry registry_;
  testing::ScaleRuns runs_;
};

TEST_F(UntunedRecorderTest, WorkloadsWithoutAnExactRecordAreWrittenOnceAsASuite) {
  const std::string log = TempPath("untuned_records.log");
  {
    auto writer = records::LogWriter::Open(log);
    ASSERT_TRUE(writer.ok());
    OPSCHED_ASSERT_OK((*writer)->Append(records::testing::MakeRecord(
        "scale x=f32[256] factor=2.0", CpuTarget(), "scale_cpu_blocked", "block=256", 1.0)));
  }
  const std::string file = TempPath("untuned.txt");
  {
    auto rt = Make(file, {log});
    ASSERT_TRUE(rt.ok()) << rt.status();
    OPSCHED_ASSERT_OK(RunScale(**rt, "scale x=f32[256]"));  // exact record: not written
    OPSCHED_ASSERT_OK(RunScale(**rt, "scale x=f32[100]"));
    OPSCHED_ASSERT_OK(RunScale(**rt, "scale x=f32[100]"));
    OPSCHED_ASSERT_OK(RunScale(**rt, "scale x=f32[100] factor=2.0"));  // the same canonical workload
    OPSCHED_ASSERT_OK(RunScale(**rt, "scale x=f32[7] factor=3.0"));
  }
  EXPECT_EQ(Lines(file), (std::vector<std::string>{"scale x=f32[100] factor=2.0", "scale x=f32[7] factor=3.0"}));
  EXPECT_EQ(ReadBytes(file).rfind("# ", 0), 0u) << "starts with its header comment";

  // A later run (another process, say) adds only what is new.
  {
    auto rt = Make(file, {log});
    ASSERT_TRUE(rt.ok()) << rt.status();
    OPSCHED_ASSERT_OK(RunScale(**rt, "scale x=f32[100]"));
    OPSCHED_ASSERT_OK(RunScale(**rt, "scale x=f32[9]"));
  }
  EXPECT_EQ(Lines(file), (std::vector<std::string>{"scale x=f32[100] factor=2.0", "scale x=f32[7] factor=3.0",
                                                   "scale x=f32[9] factor=2.0"}));

  // `opsched tune --suite FILE` takes it as it is: every line parses, none is an error.
  StatusOr<std::vector<SuiteEntry>> suite = ReadSuite(file, registry_);
  ASSERT_TRUE(suite.ok()) << suite.status();
  ASSERT_EQ(suite->size(), 3u);
  for (const SuiteEntry& e : *suite) EXPECT_TRUE(e.error.ok()) << e.error;
}

TEST_F(UntunedRecorderTest, ALastLineWithoutItsNewlineIsEndedNotLost) {
  const std::string file = TempPath("torn.txt");
  WriteBytes(file, "# header\nscale x=f32[100] factor=2.0\nscale x=f3");
  auto recorder = UntunedRecorder::Open(file);
  ASSERT_TRUE(recorder.ok()) << recorder.status();
  StatusOr<bool> noted = (*recorder)->Note("scale x=f32[100] factor=2.0");
  ASSERT_TRUE(noted.ok());
  EXPECT_FALSE(*noted);
  noted = (*recorder)->Note("scale x=f32[5] factor=2.0");
  ASSERT_TRUE(noted.ok());
  EXPECT_TRUE(*noted);
  EXPECT_EQ(ReadBytes(file), "# header\nscale x=f32[100] factor=2.0\nscale x=f3\nscale x=f32[5] factor=2.0\n");
  // A line typed by hand without a final newline is one of the file's lines.
  WriteBytes(file, "scale x=f32[6] factor=2.0");
  noted = (*recorder)->Note("scale x=f32[6] factor=2.0");
  ASSERT_TRUE(noted.ok());
  EXPECT_FALSE(*noted);
  EXPECT_EQ(ReadBytes(file), "scale x=f32[6] factor=2.0\n");
}

TEST_F(UntunedRecorderTest, AFileFarLargerThanASuiteIsRefused) {
  const std::string file = TempPath("huge.txt");
  {
    std::FILE* f = std::fopen(file.c_str(), "wb");
    ASSERT_NE(f, nullptr);
    ASSERT_EQ(::ftruncate(fileno(f), off_t{65} << 20), 0);  // sparse
    std::fclose(f);
  }
  auto recorder = UntunedRecorder::Open(file);
  ASSERT_FALSE(recorder.ok());
  EXPECT_NE(recorder.status().message().find("more than a suite"), std::string::npos) << recorder.status();
}

TEST_F(UntunedRecorderTest, RecordersSharingAFileWriteEachLineOnce) {
  const std::string file = TempPath("shared.txt");
  auto a = UntunedRecorder::Open(file);
  auto b = UntunedRecorder::Open(file);
  ASSERT_TRUE(a.ok() && b.ok());
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    UntunedRecorder* r = (t % 2 ? *a : *b).get();
    threads.emplace_back([r] {
      for (int i = 0; i < 50; ++i) {
        StatusOr<bool> noted = r->Note("scale x=f32[" + std::to_string(i + 1) + "] factor=2.0");
        EXPECT_TRUE(noted.ok()) << noted.status();
      }
    });
  }
  for (std::thread& t : threads) t.join();
  std::vector<std::string> lines = Lines(file);
  EXPECT_EQ(lines.size(), 50u);
  std::sort(lines.begin(), lines.end());
  EXPECT_EQ(std::unique(lines.begin(), lines.end()), lines.end());

  // A file replaced under the recorder (moved away to be tuned, begun afresh) is read
  // afresh: lines it lacks are written again.
  const std::string other = TempPath("shared_new.txt");
  WriteBytes(other, "scale x=f32[1] factor=2.0\n");
  ASSERT_EQ(std::rename(other.c_str(), file.c_str()), 0);
  StatusOr<bool> noted = (*a)->Note("scale x=f32[1] factor=2.0");
  ASSERT_TRUE(noted.ok());
  EXPECT_FALSE(*noted);
  noted = (*b)->Note("scale x=f32[2] factor=2.0");
  ASSERT_TRUE(noted.ok());
  EXPECT_TRUE(*noted);
  EXPECT_EQ(ReadBytes(file), "scale x=f32[1] factor=2.0\nscale x=f32[2] factor=2.0\n");
}

TEST_F(UntunedRecorderTest, AnUnusablePathIsAClearErrorAtCreation) {
  StatusOr<std::unique_ptr<Runtime>> rt = Make(testing::TempDir());  // a folder
  ASSERT_FALSE(rt.ok());
  EXPECT_NE(rt.status().message().find("record-untuned file"), std::string::npos) << rt.status();
  rt = Make(testing::TempDir() + "/no/such/folder/untuned.txt");
  ASSERT_FALSE(rt.ok());
  EXPECT_NE(rt.status().message().find("record-untuned file"), std::string::npos) << rt.status();
}

TEST_F(UntunedRecorderTest, AFullDiskDoesNotFailTheOp) {
  const std::string file = TempPath("full.txt");
  {
    auto rt = Make(file);  // writes the header
    ASSERT_TRUE(rt.ok());
  }
  const off_t header = static_cast<off_t>(ReadBytes(file).size());
  // In a child whose files cannot grow: the op still runs and returns OK.
  const int rc = testing::RunWithFileSizeLimit(header, [&] {
    auto rt = Make(file);
    if (!rt.ok()) return 2;
    if (!RunScale(**rt, "scale x=f32[100]").ok()) return 3;
    return runs_.loop.load() == 1 ? 0 : 4;
  });
  EXPECT_EQ(rc, 0);
  EXPECT_TRUE(Lines(file).empty());
}

}  // namespace
}  // namespace opsched
