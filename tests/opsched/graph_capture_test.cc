// Runtime calls under CUDA graph capture: once a workload has been called (decided and
// prepared), its calls may be captured; the graph, replayed several times, gives the
// float64 reference's results every time. A first call under capture is refused, and a
// data error found by a replay is reported by the stream's Synchronize.
#include <random>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "core/buffer.h"
#include "core/format.h"
#include "core/gpu/gpu_backend.h"
#include "core/host_tensor.h"
#include "opsched/runtime.h"
#include "registry/registry.h"
#include "tests/test_kernels.h"
#include "tests/test_util.h"

namespace opsched {
namespace {

// One workload's device tensors (inputs then outputs), its inputs on the host and the
// float64 reference of its outputs.
struct Case {
  Workload workload;
  std::vector<HostTensor> inputs;
  std::vector<TensorDesc> outputs;
  std::vector<Buffer> buffers;
  std::vector<Tensor> tensors;
  std::vector<std::vector<double>> reference;
};

StatusOr<Case> MakeCase(std::string_view line, const Device& device, std::mt19937_64& rng) {
  Case c;
  OPSCHED_ASSIGN_OR_RETURN(c.workload, Registry::Global().ParseCanonical(line));
  const OpDef* op = Registry::Global().FindOp(c.workload.op());
  for (const TensorArg& t : c.workload.tensors()) c.inputs.emplace_back(t.desc);
  OPSCHED_RETURN_IF_ERROR(op->Generate(c.workload, GeneratorOptions{}, rng, &c.inputs));
  OPSCHED_ASSIGN_OR_RETURN(c.reference, op->Reference(c.workload, c.inputs));
  c.outputs = op->OutputDescs(c.workload);
  for (const HostTensor& in : c.inputs) {
    OPSCHED_ASSIGN_OR_RETURN(Buffer b, Buffer::Allocate(device, in.storage_bytes()));
    OPSCHED_RETURN_IF_ERROR(b.CopyFromHost(in.data(), in.storage_bytes()));
    c.buffers.push_back(std::move(b));
  }
  for (const TensorDesc& d : c.outputs) {
    OPSCHED_ASSIGN_OR_RETURN(Buffer b, Buffer::Allocate(device, d.storage_bytes()));
    c.buffers.push_back(std::move(b));
  }
  const size_t inputs = c.inputs.size();
  for (size_t i = 0; i < c.buffers.size(); ++i) {
    const TensorDesc& d = i < inputs ? c.inputs[i].desc() : c.outputs[i - inputs];
    OPSCHED_ASSIGN_OR_RETURN(Tensor t, c.buffers[i].AsTensor(d));
    c.tensors.push_back(t);
  }
  return c;
}

// Poisons the outputs on `stream` (NaN in every float type).
Status Poison(Case& c, const Stream& stream) {
  for (size_t o = c.inputs.size(); o < c.buffers.size(); ++o) {
    OPSCHED_RETURN_IF_ERROR(gpu::MemsetAsync(c.buffers[o].data(), 0xff, c.buffers[o].size(), stream.native()));
  }
  return absl::OkStatus();
}

// Downloads the outputs and checks them against the reference.
Status CheckOutputs(Runtime& rt, Case& c) {
  std::vector<HostTensor> got;
  for (size_t o = 0; o < c.outputs.size(); ++o) {
    got.emplace_back(c.outputs[o]);
    OPSCHED_RETURN_IF_ERROR(c.buffers[c.inputs.size() + o].CopyToHost(got.back().data(), got.back().storage_bytes()));
  }
  OPSCHED_ASSIGN_OR_RETURN(Decision d, rt.Decide(c.workload));
  const OpDef* op = Registry::Global().FindOp(c.workload.op());
  return Annotate(op->Check(c.workload, c.inputs, got, c.reference, d.implementation->traits().deterministic, nullptr),
                  fmt::format("{} by {}", c.workload.ToString(), d.implementation->name()));
}

class GraphCaptureTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (gpu::DeviceCount() == 0) GTEST_SKIP() << "no GPU, test skipped: " << gpu::NoDeviceReason();
    StatusOr<std::unique_ptr<Runtime>> rt = Runtime::Create();
    ASSERT_TRUE(rt.ok()) << rt.status();
    rt_ = *std::move(rt);
    StatusOr<Stream> stream = Stream::Create(rt_->target().device());
    ASSERT_TRUE(stream.ok()) << stream.status();
    stream_ = *std::move(stream);
  }

  std::unique_ptr<Runtime> rt_;
  Stream stream_;
  std::mt19937_64 rng_{20261123};
};

TEST_F(GraphCaptureTest, ReplayedSequenceMatchesTheReference) {
  const std::vector<std::string> lines = {
      "scatter data=f32[1000,16] indices=i64[300,16] updates=f32[300,16] axis=0 reduction=add",
      "reduce x=f32[64,16,28,28] axes=0,2,3 op=sum",
      "reduce x=f32[257,300] axes=1 op=max",
      "conv2d x=f32[8,16,14,14] w=f32[32,16,3,3] stride=1,1 pad=1,1 dilation=1,1 groups=1 layout=nchw math=fp32",
      "conv2d_bias_act x=f32[16,1,28,28] w=f32[16,1,3,3] b=f32[16] stride=1,1 pad=1,1 dilation=1,1 groups=1 "
      "layout=nchw math=fp32 act=relu",
      "conv2d_backward x=f32[16,16,14,14] w=f32[32,16,3,3] dy=f32[16,32,14,14] stride=1,1 pad=1,1 dilation=1,1 "
      "groups=1 layout=nchw math=fp32",
  };
  std::vector<Case> cases;
  for (const std::string& line : lines) {
    StatusOr<Case> c = MakeCase(line, rt_->target().device(), rng_);
    ASSERT_TRUE(c.ok()) << line << ": " << c.status();
    cases.push_back(*std::move(c));
  }
  // The first calls decide and prepare (outside capture).
  for (Case& c : cases) OPSCHED_ASSERT_OK(rt_->Run(c.workload, c.tensors, stream_));
  OPSCHED_ASSERT_OK(rt_->Synchronize(stream_));
  for (Case& c : cases) OPSCHED_ASSERT_OK(CheckOutputs(*rt_, c));

  OPSCHED_ASSERT_OK(testing::BeginCapture(stream_));
  for (Case& c : cases) {
    Status s = rt_->Run(c.workload, c.tensors, stream_);
    if (!s.ok()) {
      (void)testing::EndCapture(stream_);
      FAIL() << c.workload.ToString() << " under capture: " << s;
    }
  }
  StatusOr<void*> graph = testing::EndCapture(stream_);
  ASSERT_TRUE(graph.ok()) << graph.status();
  for (int replay = 0; replay < 3; ++replay) {
    for (Case& c : cases) OPSCHED_ASSERT_OK(Poison(c, stream_));
    OPSCHED_ASSERT_OK(testing::ReplayGraph(*graph, stream_));
    OPSCHED_ASSERT_OK(rt_->Synchronize(stream_));
    for (Case& c : cases) {
      Status checked = CheckOutputs(*rt_, c);
      EXPECT_TRUE(checked.ok()) << "replay " << replay << ": " << checked;
    }
  }
  testing::DestroyGraph(*graph);
}

TEST_F(GraphCaptureTest, FirstCallUnderCaptureIsRefused) {
  StatusOr<Case> c = MakeCase("reduce x=f32[33,65] axes=0 op=sum", rt_->target().device(), rng_);
  ASSERT_TRUE(c.ok()) << c.status();
  OPSCHED_ASSERT_OK(testing::BeginCapture(stream_));
  Status s = rt_->Run(c->workload, c->tensors, stream_);
  StatusOr<void*> graph = testing::EndCapture(stream_);
  EXPECT_TRUE(absl::IsFailedPrecondition(s)) << s;
  EXPECT_NE(s.message().find("call it once before capturing"), std::string_view::npos) << s;
  // The refused call left the capture valid.
  ASSERT_TRUE(graph.ok()) << graph.status();
  testing::DestroyGraph(*graph);
  // Outside capture it runs.
  OPSCHED_ASSERT_OK(rt_->Run(c->workload, c->tensors, stream_));
  OPSCHED_ASSERT_OK(rt_->Synchronize(stream_));
  OPSCHED_EXPECT_OK(CheckOutputs(*rt_, *c));
}

TEST_F(GraphCaptureTest, ReplayReportsAnOutOfRangeIndexEveryTime) {
  StatusOr<Case> c = MakeCase("scatter data=f32[50] indices=i64[20] updates=f32[20] axis=0 reduction=add",
                              rt_->target().device(), rng_);
  ASSERT_TRUE(c.ok()) << c.status();
  OPSCHED_ASSERT_OK(rt_->Run(c->workload, c->tensors, stream_));
  OPSCHED_ASSERT_OK(rt_->Synchronize(stream_));
  // Index 7 becomes 50, one past the end.
  const int64_t bad = 50;
  OPSCHED_ASSERT_OK(c->buffers[1].CopyFromHost(&bad, sizeof(bad), 7 * sizeof(int64_t)));
  OPSCHED_ASSERT_OK(testing::BeginCapture(stream_));
  Status s = rt_->Run(c->workload, c->tensors, stream_);
  StatusOr<void*> graph = testing::EndCapture(stream_);
  OPSCHED_ASSERT_OK(s);
  ASSERT_TRUE(graph.ok()) << graph.status();
  for (int replay = 0; replay < 2; ++replay) {
    OPSCHED_ASSERT_OK(testing::ReplayGraph(*graph, stream_));
    Status error = rt_->Synchronize(stream_);
    EXPECT_TRUE(absl::IsOutOfRange(error) || absl::IsInvalidArgument(error)) << "replay " << replay << ": " << error;
    EXPECT_NE(error.message().find("50"), std::string_view::npos) << error;
  }
  // Nothing more is pending once reported.
  OPSCHED_EXPECT_OK(rt_->Synchronize(stream_));
  testing::DestroyGraph(*graph);
}

}  // namespace
}  // namespace opsched
