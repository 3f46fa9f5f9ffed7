#include "opsched/runtime.h"

#include <gtest/gtest.h>

#include "core/buffer.h"
#include "records/log_writer.h"
#include "tests/records/record_factory.h"
#include "tests/strategies/test_op.h"
#include "tests/test_util.h"

namespace opsched {
namespace {

class CountingAllocator : public WorkspaceAllocator {
 public:
  StatusOr<void*> Get(const Stream& stream, size_t bytes) override {
    ++calls;
    return inner.Get(stream, bytes);
  }
  int calls = 0;
  CachingWorkspaceAllocator inner;
};

// Overrides the form that is told the capture state: the Runtime, which asks the driver
// once a call, hands it over instead of the allocator asking again.
class ToldAllocator : public WorkspaceAllocator {
 public:
  StatusOr<void*> Get(const Stream& stream, size_t bytes) override {
    ++asked;
    return inner.Get(stream, bytes);
  }
  StatusOr<void*> Get(const Stream& stream, size_t bytes, bool capturing) override {
    ++told;
    told_capturing = told_capturing || capturing;
    return inner.Get(stream, bytes, capturing);
  }
  int asked = 0, told = 0;
  bool told_capturing = false;
  CachingWorkspaceAllocator inner;
};

class RuntimeTest : public ::testing::Test {
 protected:
  RuntimeTest() { testing::RegisterScaleOp(&registry_, &runs_); }

  std::unique_ptr<Runtime> Make(std::vector<std::string> records = {},
                                WorkspaceAllocator* allocator = nullptr,
                                DispatchOptions dispatch = {}) {
    RuntimeOptions o;
    o.target = CpuTarget();
    o.registry = &registry_;
    o.record_files = std::move(records);
    o.allocator = allocator;
    o.dispatch = dispatch;
    StatusOr<std::unique_ptr<Runtime>> rt = Runtime::Create(std::move(o));
    EXPECT_TRUE(rt.ok()) << rt.status();
    return *std::move(rt);
  }
  // A fresh record log in the test's temporary folder holding one record: scale
  // x=f32[256] by scale_cpu_blocked block=256 at 1 us. Empty when it cannot be written.
  static std::string BlockedRecordLog(const std::string& name) {
    const char* dir = std::getenv("TEST_TMPDIR");
    const std::string log = std::string(dir ? dir : "/tmp") + "/" + name;
    std::remove(log.c_str());
    auto writer = records::LogWriter::Open(log);
    if (!writer.ok()) return "";
    Status appended = (*writer)->Append(records::testing::MakeRecord("scale x=f32[256] factor=2.0", CpuTarget(),
                                                                     "scale_cpu_blocked", "block=256", 1.0));
    return appended.ok() ? log : "";
  }
  Tensor T(std::vector<float>& v) {
    return Tensor{TensorDesc::Contiguous(DType::kF32, {int64_t(v.size())}), v.data(), Device::Cpu()};
  }

  Registry registry_;
  testing::ScaleRuns runs_;
  Stream cpu_stream_ = Stream::Wrap(Device::Cpu(), nullptr);
};

TEST_F(RuntimeTest, RunsTheChosenImplementation) {
  auto rt = Make();
  std::vector<float> x(100), y(100, -1);
  for (int i = 0; i < 100; ++i) x[i] = i;
  Workload w = *ParseWorkload("scale x=f32[100] factor=3.0");
  Tensor tensors[] = {T(x), T(y)};
  OPSCHED_ASSERT_OK(rt->Run(w, tensors, cpu_stream_));
  for (int i = 0; i < 100; ++i) ASSERT_EQ(y[i], 3.0f * i);
  EXPECT_EQ(runs_.loop.load(), 1);
  // A workload without the default attribute is canonicalised (factor=2.0).
  OPSCHED_ASSERT_OK(rt->Run(*ParseWorkload("scale x=f32[100]"), tensors, cpu_stream_));
  EXPECT_EQ(y[7], 14.0f);
}

TEST_F(RuntimeTest, RecordsDecideAndWorkspaceIsReused) {
  const std::string log = BlockedRecordLog("runtime.log");
  ASSERT_FALSE(log.empty());
  CountingAllocator allocator;
  auto rt = Make({log}, &allocator);
  std::vector<float> x(256, 1.5f), y(256);
  Tensor tensors[] = {T(x), T(y)};
  Workload w = *ParseWorkload("scale x=f32[256]");
  for (int i = 0; i < 3; ++i) OPSCHED_ASSERT_OK(rt->Run(w, tensors, cpu_stream_));
  EXPECT_EQ(runs_.blocked.load(), 3);
  EXPECT_EQ(y[255], 3.0f);
  EXPECT_EQ(allocator.calls, 3);
  EXPECT_EQ(allocator.inner.held_bytes(), 256 * sizeof(float));  // allocated once
  ToldAllocator told;
  auto told_rt = Make({log}, &told);
  for (int i = 0; i < 2; ++i) OPSCHED_ASSERT_OK(told_rt->Run(w, tensors, cpu_stream_));
  EXPECT_EQ(told.told, 2);
  EXPECT_EQ(told.asked, 0);
  EXPECT_FALSE(told.told_capturing);  // a CPU stream is never captured
  StatusOr<Explanation> e = rt->Explain("scale x=f32[256]");
  ASSERT_TRUE(e.ok());
  EXPECT_EQ(e->decision.provenance, Provenance::kExactRecord);
  EXPECT_EQ(rt->records_note(), "") << "records of this target: nothing to say";
  // In place is allowed for scale_cpu_blocked.
  Tensor in_place[] = {T(x), T(x)};
  OPSCHED_ASSERT_OK(rt->Run(w, in_place, cpu_stream_));
  EXPECT_EQ(x[0], 3.0f);
  // Records of another target only: the runtime says so (front ends report it).
  auto write_for = [&](const Target& other, const std::string& path) {
    std::remove(path.c_str());
    auto writer = records::LogWriter::Open(path);
    ASSERT_TRUE(writer.ok());
    OPSCHED_ASSERT_OK((*writer)->Append(records::testing::MakeRecord(
        "scale x=f32[256] factor=2.0", other, "scale_cpu_blocked", "block=256", 1.0)));
  };
  Target other = CpuTarget();
  other.device_name = "another CPU";
  write_for(other, log + ".other");
  auto elsewhere = Make({log + ".other"});
  EXPECT_EQ(elsewhere->records_note().rfind("1 records loaded, none for this target", 0), 0u)
      << elsewhere->records_note();
  // A record measured with another cuDNN holds for an implementation that does not call
  // it (a process that loaded PyTorch's cuDNN keeps the own kernels' records).
  Target other_cudnn = CpuTarget();
  other_cudnn.cudnn_version = 91900;
  write_for(other_cudnn, log + ".cudnn");
  auto other_library = Make({log + ".cudnn"});
  EXPECT_EQ(other_library->records_note(), "");
  StatusOr<Explanation> held = other_library->Explain("scale x=f32[256]");
  ASSERT_TRUE(held.ok()) << held.status();
  EXPECT_EQ(held->decision.provenance, Provenance::kExactRecord);
  EXPECT_NE(held->decision.reason.find("measured with cuDNN 91900, which this implementation does not call"),
            std::string::npos)
      << held->decision.reason;
  // A missing record file is an error at creation.
  RuntimeOptions o;
  o.target = CpuTarget();
  o.registry = &registry_;
  o.record_files = {log + ".missing"};
  EXPECT_FALSE(Runtime::Create(o).ok());
}

// A workload is prepared once, on its first call; later calls run the Prepared object.
TEST_F(RuntimeTest, PreparesOncePerWorkload) {
  auto rt = Make();
  std::vector<float> x(100, 2.0f), y(100), x2(64, 1.0f), y2(64);
  Tensor first[] = {T(x), T(y)};
  Tensor second[] = {T(x2), T(y2)};
  for (int i = 0; i < 5; ++i) {
    OPSCHED_ASSERT_OK(rt->Run(*ParseWorkload("scale x=f32[100]"), first, cpu_stream_));
    OPSCHED_ASSERT_OK(rt->Run(*ParseWorkload("scale x=f32[64]"), second, cpu_stream_));
  }
  EXPECT_EQ(runs_.prepared.load(), 2);
  EXPECT_EQ(runs_.loop.load() + runs_.blocked.load(), 10);
  EXPECT_EQ(y[99], 4.0f);
  EXPECT_EQ(y2[63], 2.0f);
}

// The CUB-style overload runs in the caller's workspace and never asks the allocator;
// a workspace smaller than WorkspaceBytes is refused before anything runs.
TEST_F(RuntimeTest, CallerWorkspace) {
  CountingAllocator allocator;
  auto rt = Make({}, &allocator);
  Workload w = *ParseWorkload("scale x=f32[4096]");  // the rule: scale_cpu_blocked block=1024
  StatusOr<size_t> bytes = rt->WorkspaceBytes(w);
  ASSERT_TRUE(bytes.ok()) << bytes.status();
  EXPECT_EQ(*bytes, 1024 * sizeof(float));
  std::vector<float> x(4096, 1.0f), y(4096), workspace(1024);
  Tensor tensors[] = {T(x), T(y)};
  Status small = rt->Run(w, tensors, cpu_stream_, workspace.data(), *bytes - 1);
  EXPECT_EQ(small.code(), StatusCode::kInvalidArgument) << small;
  EXPECT_NE(small.message().find("needs 4096 bytes of workspace, 4095 given"), std::string::npos) << small;
  EXPECT_EQ(runs_.blocked.load(), 0);
  EXPECT_EQ(rt->Run(w, tensors, cpu_stream_, nullptr, *bytes).code(), StatusCode::kInvalidArgument);
  OPSCHED_ASSERT_OK(rt->Run(w, tensors, cpu_stream_, workspace.data(), *bytes));
  EXPECT_EQ(runs_.blocked.load(), 1);
  EXPECT_EQ(y[4095], 2.0f);
  EXPECT_EQ(allocator.calls, 0);
}

// DispatchOptions::max_workspace_bytes holds for rules and records alike: a choice over
// the limit is passed over for one within it.
TEST_F(RuntimeTest, MaxWorkspaceBytesBoundsEveryChoice) {
  const std::string log = BlockedRecordLog("max_workspace.log");
  ASSERT_FALSE(log.empty());
  DispatchOptions limited;
  limited.max_workspace_bytes = 64 * sizeof(float);
  auto rt = Make({log}, nullptr, limited);
  for (const char* line : {"scale x=f32[256]", "scale x=f32[4096]"}) {
    StatusOr<Decision> d = rt->Decide(*ParseWorkload(line));
    ASSERT_TRUE(d.ok()) << d.status();
    EXPECT_LE(d->workspace_bytes, limited.max_workspace_bytes) << line << ": " << d->implementation->name() << " "
                                                               << d->config.ToString();
  }
  StatusOr<Explanation> e = rt->Explain("scale x=f32[256]");
  ASSERT_TRUE(e.ok());
  bool said = false;
  for (const Considered& c : e->considered) said |= c.verdict.find("more than max_workspace_bytes") != std::string::npos;
  EXPECT_TRUE(said) << e->ToString();
  // Without the limit the record's choice stands.
  auto free = Make({log});
  EXPECT_EQ((*free->Decide(*ParseWorkload("scale x=f32[256]"))).workspace_bytes, 256 * sizeof(float));
}

TEST_F(RuntimeTest, BadCallsAreRefusedBeforeRunning) {
  auto rt = Make();
  std::vector<float> x(100, 1), y(100), small(99);
  Workload w = *ParseWorkload("scale x=f32[100]");
  auto expect_error = [&](std::vector<Tensor> tensors, const char* message) {
    Status s = rt->Run(w, tensors, cpu_stream_);
    EXPECT_EQ(s.code(), StatusCode::kInvalidArgument) << message;
    EXPECT_NE(s.message().find(message), std::string::npos) << s;
  };
  expect_error({T(x)}, "scale takes 2 tensors");
  expect_error({T(x), T(small)}, "tensor 1 is f32[99] but the workload has f32[100]");
  Tensor on_gpu = T(y);
  on_gpu.device = Device::Cuda(0);
  expect_error({T(x), on_gpu}, "tensor 1 is on cuda:0");
  Tensor null_out = T(y);
  null_out.data = nullptr;
  expect_error({T(x), null_out}, "tensor 1 has no data");
  expect_error({T(x), T(x)}, "does not run in place");  // scale_cpu_loop is chosen
  Tensor shifted{TensorDesc::Contiguous(DType::kF32, {100}), x.data() + 1, Device::Cpu()};
  std::vector<float> big(101);
  Tensor a{TensorDesc::Contiguous(DType::kF32, {100}), big.data(), Device::Cpu()};
  Tensor b{TensorDesc::Contiguous(DType::kF32, {100}), big.data() + 1, Device::Cpu()};
  expect_error({a, b}, "output 0 overlaps tensor 0");
  Stream gpu_stream = Stream::Wrap(Device::Cuda(0), nullptr);
  EXPECT_FALSE(rt->Run(w, std::vector<Tensor>{T(x), T(y)}, gpu_stream).ok());
  EXPECT_EQ(runs_.loop.load(), 0);  // nothing ran
  EXPECT_FALSE(rt->Run(*ParseWorkload("scale x=f32[2,2]"), std::vector<Tensor>{}, cpu_stream_).ok());
}

}  // namespace
}  // namespace opsched
