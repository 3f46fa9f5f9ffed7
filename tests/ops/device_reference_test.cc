// The float64 GPU references (registry/device_verification.h) against the CPU ones,
// for every op and dtype on small and odd shapes: inputs generated on the device are
// valid (the CPU reference accepts them), both references agree, the device check
// passes what the CPU check passes and fails what it fails (a corrupted output, a
// modified input, an out-of-range index). GPU only: skips without a device.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <random>

#include "core/format.h"
#include "core/gpu/gpu_backend.h"
#include "registry/registry.h"
#include "tests/ops/op_test_util.h"
#include "tests/test_util.h"
#include "tuner/trial.h"

namespace opsched {
namespace {

using testing::ApplicableImplementations;
using testing::SampleConfigs;

class DeviceReferenceTest : public ::testing::Test {
 protected:
  void SetUp() override {
    OPSCHED_REQUIRE_GPU();
    target_ = *QueryTarget(Device{gpu::BackendKind(), 0});
  }

  StatusOr<std::unique_ptr<Trial>> Make(const std::string& line, GeneratorOptions generator = {}) {
    OPSCHED_ASSIGN_OR_RETURN(Workload w, Registry::Global().ParseCanonical(line));
    TrialOptions options;
    options.seed = seed_++;
    options.generator = generator;
    options.verification = Verification::kDevice;
    return Trial::Create(Registry::Global(), w, target_, options);
  }

  // Downloads the outputs of the trial's last run.
  StatusOr<std::vector<HostTensor>> Outputs(Trial& trial) {
    std::vector<HostTensor> out;
    const std::vector<Tensor>& t = trial.tensors();
    for (size_t i = trial.workload().tensors().size(); i < t.size(); ++i) {
      HostTensor h(t[i].desc);
      OPSCHED_RETURN_IF_ERROR(gpu::MemcpyAsync(h.data(), t[i].data, h.storage_bytes(), trial.stream().native()));
      out.push_back(std::move(h));
    }
    OPSCHED_RETURN_IF_ERROR(trial.stream().Synchronize());
    return out;
  }

  // The cross-check of one workload line; *runs counts checked implementation runs.
  Status CrossCheck(const std::string& line, int* runs, GeneratorOptions generator = {}) {
    OPSCHED_ASSIGN_OR_RETURN(std::unique_ptr<Trial> trial, Make(line, generator));
    if (!trial->verifies_on_device()) return absl::InternalError("not verified on the device");
    OPSCHED_RETURN_IF_ERROR(trial->DownloadInputs());
    const OpDef& op = trial->op();
    const Workload& w = trial->workload();
    OPSCHED_ASSIGN_OR_RETURN(std::vector<std::vector<double>> cpu, op.Reference(w, trial->inputs()));
    OPSCHED_ASSIGN_OR_RETURN(const auto* device, trial->Reference());
    if (device->size() != cpu.size()) return absl::InternalError("output counts differ");
    for (size_t o = 0; o < cpu.size(); ++o) {
      if ((*device)[o].size() != cpu[o].size()) return absl::InternalError("output sizes differ");
      for (size_t e = 0; e < cpu[o].size(); ++e) {
        const double a = cpu[o][e], b = (*device)[o][e];
        const bool same = (std::isnan(a) && std::isnan(b)) || a == b ||
                          std::abs(a - b) <= 1e-9 * (1 + std::abs(a));
        if (!same) {
          return absl::DataLossError(fmt::format("{}: output {} element {}: CPU reference {}, GPU reference {}", line,
                                                 o, e, a, b));
        }
      }
    }
    std::mt19937_64 rng(seed_);
    for (const Implementation* impl : ApplicableImplementations(Registry::Global(), w, target_)) {
      for (const Config& config : SampleConfigs(impl->Space(w, target_), 2, rng)) {
        const std::string where = fmt::format("{} [{} {}]", line, impl->name(), config.ToString());
        OPSCHED_RETURN_IF_ERROR(Annotate(trial->Run(*impl, config), where));
        OPSCHED_RETURN_IF_ERROR(Annotate(trial->Check(*impl), where + " device check"));
        OPSCHED_RETURN_IF_ERROR(Annotate(trial->CheckInputsUnchanged(), where));
        // The CPU check accepts what the device check accepted.
        OPSCHED_ASSIGN_OR_RETURN(std::vector<HostTensor> outs, Outputs(*trial));
        OPSCHED_RETURN_IF_ERROR(Annotate(
            op.Check(w, trial->inputs(), outs, cpu, impl->traits().deterministic, nullptr), where + " CPU check"));
        ++*runs;
      }
    }
    return absl::OkStatus();
  }

  Target target_;
  uint64_t seed_ = std::random_device{}();
};

TEST_F(DeviceReferenceTest, ScatterEveryReductionAndDtype) {
  int runs = 0;
  for (const char* dtype : {"f32", "f16", "bf16", "i32", "i64"}) {
    for (const char* reduction : {"none", "add", "mul", "min", "max"}) {
      for (const char* shapes : {
               "data={0}[100] indices=i64[37] updates={0}[37] axis=0",
               "data={0}[7,5,3] indices=i32[9,5,2] updates={0}[9,5,2] axis=0",
               "data={0}[6,13] indices=i64[6,40] updates={0}[6,40] axis=-1",
               "data={0}[4,6]:[1,4] indices=i64[3,6] updates={0}[3,6]:[6,1] axis=0",
               "data={0}[1] indices=i64[1] updates={0}[1] axis=0",
               "data={0}[5,3] indices=i64[0,3] updates={0}[0,3] axis=0",
               // 200 updates into 3 targets: integer sums and products wrap around
               "data={0}[3] indices=i64[200] updates={0}[200] axis=0",
           }) {
        const std::string line =
            fmt::format("scatter {} reduction={}", fmt::format(fmt::runtime(shapes), dtype), reduction);
        OPSCHED_ASSERT_OK(CrossCheck(line, &runs));
      }
    }
  }
  // Index patterns and negative indices are generated on the device too.
  for (const char* pattern : {"unique", "hot", "uniform"}) {
    GeneratorOptions g;
    g.index_pattern = pattern;
    g.negative_index_fraction = 0.3;
    OPSCHED_ASSERT_OK(CrossCheck("scatter data=f32[50,8] indices=i64[40,8] updates=f32[40,8] axis=0 reduction=add",
                                 &runs, g));
    OPSCHED_ASSERT_OK(CrossCheck("scatter data=f32[50,8] indices=i64[40,8] updates=f32[40,8] axis=0 reduction=none",
                                 &runs, g));
  }
  std::printf("%d checked runs\n", runs);
  EXPECT_GT(runs, 200);
}

TEST_F(DeviceReferenceTest, ReduceEveryOpAndDtype) {
  int runs = 0;
  for (const char* dtype : {"f32", "f16", "bf16"}) {
    for (const char* op : {"sum", "mean", "max", "min", "sumsq"}) {
      for (const char* shape : {
               "x={0}[3,5,7,2] axes=1,3", "x={0}[17,9] axes=0", "x={0}[1] axes=0", "x={0}[6,4]:[1,6] axes=1",
               "x={0}[2,3,70001] axes=2", "x={0}[131073] axes=0", "x={0}[4,0,3] axes=2", "x={0}[5,4,3] axes=0,1,2",
           }) {
        const std::string line = fmt::format("reduce {} op={}", fmt::format(fmt::runtime(shape), dtype), op);
        OPSCHED_ASSERT_OK(CrossCheck(line, &runs));
      }
    }
  }
  for (const char* line : {"reduce x=i32[3,5,7,2] axes=1,3 op=sum", "reduce x=i32[17,9] axes=0 op=sum dtype=i64",
                           "reduce x=i64[6,4]:[1,6] axes=1 op=max", "reduce x=i64[2,3,70001] axes=2 op=min",
                           "reduce x=i32[131073] axes=0 op=max", "reduce x=i64[4,0,3] axes=2 op=sum"}) {
    OPSCHED_ASSERT_OK(CrossCheck(line, &runs));
  }
  GeneratorOptions specials;
  specials.special_value_fraction = 0.05;
  OPSCHED_ASSERT_OK(CrossCheck("reduce x=f32[40,33] axes=1 op=max", &runs, specials));
  OPSCHED_ASSERT_OK(CrossCheck("reduce x=f32[40,33] axes=0 op=sum", &runs, specials));
  std::printf("%d checked runs\n", runs);
  EXPECT_GT(runs, 200);
}

TEST_F(DeviceReferenceTest, Conv2dEveryKindLayoutAndDtype) {
  int runs = 0;
  for (const char* dtype : {"f32", "f16", "bf16"}) {
    for (const char* layout : {"nchw", "nhwc"}) {
      const bool nchw = std::string(layout) == "nchw";
      const std::string x = nchw ? fmt::format("{}[2,6,9,7]", dtype) : fmt::format("{}[2,9,7,6]", dtype);
      const std::string w = nchw ? fmt::format("{}[4,3,3,2]", dtype) : fmt::format("{}[4,3,2,3]", dtype);
      const std::string attrs = fmt::format("stride=2,1 pad=1,0 dilation=1,2 groups=2 layout={}", layout);
      const std::string dy = nchw ? fmt::format("{}[2,4,5,5]", dtype) : fmt::format("{}[2,5,5,4]", dtype);
      OPSCHED_ASSERT_OK(CrossCheck(fmt::format("conv2d x={} w={} {}", x, w, attrs), &runs));
      OPSCHED_ASSERT_OK(CrossCheck(
          fmt::format("conv2d_bias_act x={} w={} b={}[4] {} act=sigmoid", x, w, dtype, attrs), &runs));
      OPSCHED_ASSERT_OK(CrossCheck(fmt::format("conv2d_backward x={} w={} dy={} {}", x, w, dy, attrs), &runs));
    }
  }
  OPSCHED_ASSERT_OK(CrossCheck("conv2d_bias_act x=f32[1,3,5,5] w=f32[2,3,3,3] b=f32[2] pad=1,1 act=relu", &runs));
  OPSCHED_ASSERT_OK(CrossCheck("conv2d x=f32[1,1,1,1] w=f32[1,1,1,1]", &runs));
  std::printf("%d checked runs\n", runs);
  EXPECT_GT(runs, 40);
}

TEST_F(DeviceReferenceTest, PointwiseEveryDtypeAndShape) {
  int runs = 0;
  for (const char* dtype : {"f32", "f16", "bf16"}) {
    for (const char* program : {
             // broadcasting along a trailing and a leading dimension, the example
             "a={0}[64,33] b={0}[33] out={0}[64,33] expr=\"relu(a+b)*0.5\"",
             "a={0}[5,1] b={0}[1,7] out={0}[5,7] expr=\"max(a,b)-min(a,b)/(abs(b)+1)\"",
             // a strided (transposed) input, a single element, an empty tensor, rank 5
             "a={0}[6,4]:[1,6] b={0}[6,4] out={0}[6,4] expr=\"a*b+exp(-abs(a))\"",
             "x={0}[1] out={0}[1] expr=\"gelu(x)+gelu_tanh(x)\"",
             "x={0}[0,3] out={0}[0,3] expr=\"sigmoid(x)\"",
             "x={0}[2,3,1,4,5] s={0}[3,1,1,1] out={0}[2,3,1,4,5] expr=\"silu(x)*s+tanh(x)\"",
             // inputs drawn positive for log, sqrt, rsqrt and a divisor
             "a={0}[37] b={0}[37] out={0}[37] expr=\"log(a)+sqrt(b)*rsqrt(a)-1/b\"",
             // the second operand deeper than the first: evaluated first on the device
             "a={0}[19] b={0}[19] out={0}[19] expr=\"a-(b-(a*(b-(a+b*(a-b)))))\"",
             // casts, negation, and two outputs (the LSTM cell)
             "x={0}[33] out={0}[33] expr=\"f16(x*3)+bf16(x)*-x\"",
             "c={0}[5,17] f={0}[5,17] g={0}[5,17] i={0}[5,17] o={0}[5,17] c2={0}[5,17] h={0}[5,17] "
             "expr=\"c2=sigmoid(f)*c+sigmoid(i)*tanh(g); h=sigmoid(o)*tanh(c2)\"",
         }) {
      OPSCHED_ASSERT_OK(CrossCheck(fmt::format("pointwise {}", fmt::format(fmt::runtime(program), dtype)), &runs));
    }
  }
  GeneratorOptions specials;
  specials.special_value_fraction = 0.05;
  OPSCHED_ASSERT_OK(CrossCheck(
      "pointwise x=f32[64,1024] out=f32[64,1024] expr=\"tanh(sigmoid(x)*2-1)*exp(-abs(x))+relu(x)*0.5\"", &runs,
      specials));
  OPSCHED_ASSERT_OK(CrossCheck("pointwise a=f32[300] b=f32[300] out=f32[300] expr=\"log(a)/b+max(a,b)\"", &runs,
                               specials));
  std::printf("%d checked runs\n", runs);
  EXPECT_GT(runs, 100);
}

// A wrong output element fails the device check, naming it as the CPU check does.
TEST_F(DeviceReferenceTest, CorruptedOutputsFailTheDeviceCheck) {
  for (const char* line : {"scatter data=f32[64] indices=i64[20] updates=f32[20] axis=0 reduction=add",
                           "scatter data=f32[64] indices=i64[20] updates=f32[20] axis=0 reduction=none",
                           "reduce x=f16[16,300] axes=1 op=sum", "reduce x=f32[16,30] axes=1 op=max",
                           "conv2d x=f32[1,4,6,6] w=f32[3,4,3,3]",
                           "conv2d_backward x=f32[1,4,6,6] w=f32[3,4,3,3] dy=f32[1,3,4,4]",
                           "pointwise a=f32[8,5] b=f32[5] out=f32[8,5] expr=\"relu(a+b)*0.5\"",
                           "pointwise c=f16[4,9] f=f16[4,9] g=f16[4,9] i=f16[4,9] o=f16[4,9] c2=f16[4,9] h=f16[4,9] "
                           "expr=\"c2=sigmoid(f)*c+sigmoid(i)*tanh(g); h=sigmoid(o)*tanh(c2)\""}) {
    StatusOr<std::unique_ptr<Trial>> trial = Make(line);
    OPSCHED_ASSERT_OK(trial.status());
    Trial& t = **trial;
    const auto impls = ApplicableImplementations(Registry::Global(), t.workload(), target_);
    ASSERT_FALSE(impls.empty()) << line;
    const Implementation& impl = *impls.front();
    const Config config = impl.Space(t.workload(), target_).Enumerate(1).front();
    OPSCHED_ASSERT_OK(t.Run(impl, config));
    OPSCHED_ASSERT_OK(t.Check(impl));
    OPSCHED_ASSERT_OK(t.DownloadInputs());
    // Overwrite the last element of the last output with a value far from any result.
    const Tensor& out = t.tensors().back();
    const int64_t last = out.desc.numel() - 1;
    HostTensor wrong(TensorDesc::Contiguous(out.desc.dtype(), {1}));
    wrong.Set(0, 1000.0);
    const size_t size = DTypeSize(out.desc.dtype());
    OPSCHED_ASSERT_OK(gpu::MemcpyAsync(static_cast<char*>(out.data) + last * size, wrong.data(), size,
                                       t.stream().native()));
    OPSCHED_ASSERT_OK(t.stream().Synchronize());
    const Status device = t.Check(impl);
    ASSERT_TRUE(absl::IsDataLoss(device)) << line << ": " << device;
    EXPECT_NE(Message(device).find("1000"), std::string_view::npos) << device;
    EXPECT_NE(Message(device).find("device check: 1 of"), std::string_view::npos) << device;
    // The CPU check fails too, on the same element.
    StatusOr<std::vector<HostTensor>> outs = Outputs(t);
    OPSCHED_ASSERT_OK(outs.status());
    OPSCHED_ASSERT_OK(t.Reference().status());
    std::vector<std::vector<double>> cpu = *t.op().Reference(t.workload(), t.inputs());
    const Status host = t.op().Check(t.workload(), t.inputs(), *outs, cpu, impl.traits().deterministic, nullptr);
    EXPECT_TRUE(absl::IsDataLoss(host)) << host;
    // Both name the same element and value (the expected values may differ in their last
    // bits: the references sum in different orders).
    const std::string device_text(Message(device)), host_text(Message(host));
    EXPECT_EQ(device_text.substr(0, device_text.find(" expected")), host_text.substr(0, host_text.find(" expected")));
  }
}

TEST_F(DeviceReferenceTest, ModifiedInputsAreNoticed) {
  StatusOr<std::unique_ptr<Trial>> trial = Make("reduce x=f32[8,8] axes=1 op=sum");
  OPSCHED_ASSERT_OK(trial.status());
  OPSCHED_ASSERT_OK((*trial)->CheckInputsUnchanged());
  const float v = 7.0f;
  OPSCHED_ASSERT_OK(gpu::MemcpyAsync(static_cast<char*>((*trial)->tensors()[0].data) + 12, &v, sizeof v,
                                     (*trial)->stream().native()));
  OPSCHED_ASSERT_OK((*trial)->stream().Synchronize());
  const Status s = (*trial)->CheckInputsUnchanged();
  EXPECT_TRUE(absl::IsDataLoss(s)) << s;
  EXPECT_NE(Message(s).find("input 'x' was modified"), std::string_view::npos) << s;
}

TEST_F(DeviceReferenceTest, OutOfRangeIndicesAreTheOpsError) {
  StatusOr<std::unique_ptr<Trial>> trial =
      Make("scatter data=f32[10,3] indices=i64[4,3] updates=f32[4,3] axis=0 reduction=add");
  OPSCHED_ASSERT_OK(trial.status());
  const int64_t bad = 10;
  OPSCHED_ASSERT_OK(gpu::MemcpyAsync(static_cast<char*>((*trial)->tensors()[1].data) + 5 * sizeof(int64_t), &bad,
                                     sizeof bad, (*trial)->stream().native()));
  OPSCHED_ASSERT_OK((*trial)->stream().Synchronize());
  const Status s = (*trial)->DeviceRef().status();
  EXPECT_EQ(Message(s), "scatter: index 10 at position [1,2] is out of range [-10,10) of axis 0") << s;
}

// The generator is counter-based: a seed gives the same inputs every time.
TEST_F(DeviceReferenceTest, GenerationIsReproducible) {
  TrialOptions options;
  options.seed = 42;
  options.verification = Verification::kDevice;
  const Workload w =
      *Registry::Global().ParseCanonical("scatter data=bf16[33,7] indices=i32[20,7] updates=bf16[20,7] axis=0");
  auto a = *Trial::Create(Registry::Global(), w, target_, options);
  auto b = *Trial::Create(Registry::Global(), w, target_, options);
  OPSCHED_ASSERT_OK(a->DownloadInputs());
  OPSCHED_ASSERT_OK(b->DownloadInputs());
  for (size_t i = 0; i < a->inputs().size(); ++i) {
    EXPECT_EQ(0, std::memcmp(a->inputs()[i].data(), b->inputs()[i].data(), a->inputs()[i].storage_bytes()));
  }
}

}  // namespace
}  // namespace opsched
