// Batch-norm inference (ops/pointwise/pointwise_batchnorm.h) and its folded forms: which
// programs and layouts the batchnorm implementations take, and that they (with every other implementation
// that applies) match the float64 reference on fresh inputs: NCHW and channels-last,
// f32/f16/bf16 with statistics of their own dtype, g and b absent, one-element
// statistics, odd runs, clamps (ReLU6, hardtanh), hoisted per-channel factors, empty and
// one-element tensors, in place.
#include <gtest/gtest.h>

#include <random>
#include <string>
#include <vector>

#include "core/format.h"
#include "ops/pointwise/pointwise_batchnorm.h"
#include "ops/pointwise/pointwise_def.h"
#include "strategies/dispatcher.h"
#include "tests/ops/op_test_util.h"
#include "tests/records/record_factory.h"
#include "tests/test_util.h"

namespace opsched {
namespace {

using pointwise::BatchNormPlan;

Workload Canonical(const std::string& line) {
  StatusOr<Workload> w = Registry::Global().ParseCanonical(line);
  EXPECT_TRUE(w.ok()) << line << ": " << w.status();
  return w.ok() ? *w : Workload();
}

StatusOr<BatchNormPlan> PlanOf(const std::string& line) { return pointwise::BatchNormPlanFor(Canonical(line)); }

// The input number of a name (inputs are numbered in name order).
int Input(const std::string& line, const std::string& name) {
  StatusOr<std::shared_ptr<const pointwise::Compiled>> c = pointwise::CompiledFor(Canonical(line));
  if (!c.ok()) return -2;
  const auto& in = (*c)->program.inputs;
  for (size_t i = 0; i < in.size(); ++i) {
    if (in[i] == name) return static_cast<int>(i);
  }
  return -1;
}

TEST(BatchNormTest, PlansNchwAndChannelsLastWithTheirRoles) {
  const std::string nchw = "pointwise x=f32[32,64,56,56] m=f32[64,1,1] v=f32[64,1,1] g=f32[64,1,1] b=f32[64,1,1] "
                           "out=f32[32,64,56,56] expr=\"max((x-m)*rsqrt(v+1e-5)*g+b,0)\"";
  StatusOr<BatchNormPlan> p = PlanOf(nchw);
  ASSERT_TRUE(p.ok()) << p.status();
  EXPECT_EQ(p->x, Input(nchw, "x"));
  EXPECT_EQ(p->param[BatchNormPlan::kMean], Input(nchw, "m"));
  EXPECT_EQ(p->param[BatchNormPlan::kVar], Input(nchw, "v"));
  EXPECT_EQ(p->param[BatchNormPlan::kScale], Input(nchw, "g"));
  EXPECT_EQ(p->param[BatchNormPlan::kShift], Input(nchw, "b"));
  EXPECT_FLOAT_EQ(p->eps, 1e-5f);
  // max(y, 0) with no activation is relu (no clamps).
  EXPECT_EQ(p->act, pointwise::OpCode::kRelu);
  EXPECT_EQ(p->bound[0].op, pointwise::OpCode::kCastF32);
  EXPECT_FALSE(p->hoisted);
  EXPECT_EQ(p->channels, 64);
  EXPECT_EQ(p->inner, 56 * 56);
  EXPECT_EQ(p->numel, int64_t(32) * 64 * 56 * 56);
  for (int k = 0; k < 4; ++k) EXPECT_EQ(p->channel_stride[k], 1) << k;

  // Channels-last bf16 activations with f32 statistics; the factors in another order, no g.
  const std::string nhwc = "pointwise x=bf16[64,28,28,512] m=f32[512] v=f32[512] b=f32[512] out=bf16[64,28,28,512] "
                           "expr=\"silu(b+rsqrt(1e-3+v)*(x-m))\"";
  p = PlanOf(nhwc);
  ASSERT_TRUE(p.ok()) << p.status();
  EXPECT_EQ(p->param[BatchNormPlan::kScale], -1);
  EXPECT_EQ(p->param[BatchNormPlan::kShift], Input(nhwc, "b"));
  EXPECT_FLOAT_EQ(p->eps, 1e-3f);
  EXPECT_EQ(p->act, pointwise::OpCode::kSilu);
  EXPECT_EQ(p->channels, 512);
  EXPECT_EQ(p->inner, 1);

  // One-element statistics beside per-channel ones; no b, no activation.
  p = PlanOf("pointwise x=f32[33,8] m=f32[8] v=f32[1] g=f32[8] out=f32[33,8] expr=\"(x-m)*g*rsqrt(v+0.5)\"");
  ASSERT_TRUE(p.ok()) << p.status();
  EXPECT_EQ(p->act, pointwise::OpCode::kCastF32);
  EXPECT_EQ(p->param[BatchNormPlan::kShift], -1);
  EXPECT_EQ(p->channel_stride[BatchNormPlan::kMean], 1);
  EXPECT_EQ(p->channel_stride[BatchNormPlan::kVar], 0);
  EXPECT_EQ(p->channels, 8);
  EXPECT_EQ(p->inner, 1);

  // The folded forms: x alone is found by its layout whichever name sorts first.
  const std::string folded = "pointwise z=f32[16,32,7,7] a=f32[32,1,1] b=f32[32,1,1] out=f32[16,32,7,7] "
                             "expr=\"relu(z*a+b)\"";
  p = PlanOf(folded);
  ASSERT_TRUE(p.ok()) << p.status();
  EXPECT_EQ(p->x, Input(folded, "z"));
  EXPECT_EQ(p->param[BatchNormPlan::kMean], -1);
  EXPECT_EQ(p->param[BatchNormPlan::kVar], -1);
  EXPECT_EQ(p->param[BatchNormPlan::kScale], Input(folded, "a"));
  EXPECT_EQ(p->param[BatchNormPlan::kShift], Input(folded, "b"));
  EXPECT_EQ(p->act, pointwise::OpCode::kRelu);
  EXPECT_EQ(p->inner, 49);
  const std::string bias = "pointwise x=f16[8,64,28,28] a=f16[64,1,1] out=f16[8,64,28,28] expr=\"silu(a+x)\"";
  p = PlanOf(bias);
  ASSERT_TRUE(p.ok()) << p.status();
  EXPECT_EQ(p->x, Input(bias, "x"));
  EXPECT_EQ(p->param[BatchNormPlan::kShift], Input(bias, "a"));
  EXPECT_EQ(p->param[BatchNormPlan::kScale], -1);
  EXPECT_EQ(p->channels, 64);
  const std::string scale = "pointwise x=f32[8,64,28,28] g=f32[64,1,1] out=f32[8,64,28,28] expr=\"g*x\"";
  p = PlanOf(scale);
  ASSERT_TRUE(p.ok()) << p.status();
  EXPECT_EQ(p->x, Input(scale, "x"));
  EXPECT_EQ(p->param[BatchNormPlan::kScale], Input(scale, "g"));
  EXPECT_FALSE(p->gate);

  // A squeeze-excite gate: s per image and channel, N*C channels of H*W elements.
  const std::string gate = "pointwise x=f16[64,240,28,28] s=f16[64,240,1,1] out=f16[64,240,28,28] expr=\"x*sigmoid(s)\"";
  p = PlanOf(gate);
  ASSERT_TRUE(p.ok()) << p.status();
  EXPECT_TRUE(p->gate);
  EXPECT_EQ(p->x, Input(gate, "x"));
  EXPECT_EQ(p->param[BatchNormPlan::kScale], Input(gate, "s"));
  EXPECT_EQ(p->channels, 64 * 240);
  EXPECT_EQ(p->inner, 28 * 28);
}

// Clamps after the activation (ReLU6, hardtanh), innermost first, each as written.
TEST(BatchNormTest, PlansClampsAfterTheActivation) {
  const std::string relu6 = "pointwise x=f16[8,32,14,14] m=f16[32,1,1] v=f16[32,1,1] g=f16[32,1,1] b=f16[32,1,1] "
                            "out=f16[8,32,14,14] expr=\"min(max((x-m)*rsqrt(v+1e-5)*g+b,0),6)\"";
  StatusOr<BatchNormPlan> p = PlanOf(relu6);
  ASSERT_TRUE(p.ok()) << p.status();
  // The inner max(y, 0) with no activation is relu; min(., 6) the clamp.
  EXPECT_EQ(p->act, pointwise::OpCode::kRelu);
  EXPECT_EQ(p->bound[0].op, pointwise::OpCode::kMin);
  EXPECT_EQ(p->bound[0].value, 6.0f);
  EXPECT_EQ(p->bound[1].op, pointwise::OpCode::kCastF32);
  EXPECT_EQ(p->param[BatchNormPlan::kVar], Input(relu6, "v"));
  // Hardtanh: two clamps, no activation.
  p = PlanOf("pointwise x=f32[4,6,6,16] s=f32[16] out=f32[4,6,6,16] expr=\"max(min(x*s,1),-1)\"");
  ASSERT_TRUE(p.ok()) << p.status();
  EXPECT_EQ(p->act, pointwise::OpCode::kCastF32);
  EXPECT_EQ(p->bound[0].op, pointwise::OpCode::kMin);
  EXPECT_EQ(p->bound[0].value, 1.0f);
  EXPECT_EQ(p->bound[1].op, pointwise::OpCode::kMax);
  EXPECT_EQ(p->bound[1].value, -1.0f);
  // A clamp after an activation, channels-last.
  p = PlanOf("pointwise x=f32[4,6,6,16] s=f32[16] t=f32[16] out=f32[4,6,6,16] expr=\"min(silu(x*s+t),2.5)\"");
  ASSERT_TRUE(p.ok()) << p.status();
  EXPECT_EQ(p->act, pointwise::OpCode::kSilu);
  EXPECT_EQ(p->bound[0].op, pointwise::OpCode::kMin);
  EXPECT_EQ(p->bound[0].value, 2.5f);
  EXPECT_EQ(p->bound[1].op, pointwise::OpCode::kCastF32);
  EXPECT_EQ(p->inner, 1);
}

// A per-channel factor that is an expression of per-channel tensors: the plan is of the
// hoisted main program, the factor a hoisted value (an input after the workload's).
TEST(BatchNormTest, PlansTheHoistedMainProgram) {
  const std::string line = "pointwise x=f32[64,256] b=f32[256] g=f32[256] out=f32[64,256] "
                           "expr=\"max(min((x-b)*rsqrt(g*g+1e-5)*0.5+b,6),0)\"";
  StatusOr<BatchNormPlan> p = PlanOf(line);
  ASSERT_TRUE(p.ok()) << p.status();
  EXPECT_TRUE(p->hoisted);
  EXPECT_EQ(p->x, Input(line, "x"));
  EXPECT_EQ(p->param[BatchNormPlan::kMean], Input(line, "b"));
  EXPECT_EQ(p->param[BatchNormPlan::kShift], Input(line, "b"));
  EXPECT_EQ(p->param[BatchNormPlan::kScale], 3);  // $h0, after the three inputs
  EXPECT_EQ(p->param[BatchNormPlan::kVar], -1);
  EXPECT_EQ(p->channels, 256);
  EXPECT_EQ(p->inner, 1);
  EXPECT_EQ(p->bound[0].op, pointwise::OpCode::kMin);
  EXPECT_EQ(p->bound[1].op, pointwise::OpCode::kMax);
  // The same chain where the program itself is batch-norm: no hoisting.
  p = PlanOf("pointwise x=f32[64,256] b=f32[256] g=f32[256] out=f32[64,256] expr=\"(x-b)*rsqrt(g+1e-5)+b\"");
  ASSERT_TRUE(p.ok()) << p.status();
  EXPECT_FALSE(p->hoisted);
  EXPECT_EQ(p->factor, 1.0f);
  // Named so that the canonical product is 0.5*(a-b)*rsqrt(...): only the rsqrt is
  // hoisted, and the constant is the plan's factor.
  const std::string named = "pointwise a=f32[64,256] b=f32[256] g=f32[256] out=f32[64,256] "
                            "expr=\"max(min((a-b)*rsqrt(g*g+1e-5)*0.5+b,6),0)\"";
  p = PlanOf(named);
  ASSERT_TRUE(p.ok()) << p.status();
  EXPECT_TRUE(p->hoisted);
  EXPECT_EQ(p->x, Input(named, "a"));
  EXPECT_EQ(p->factor, 0.5f);
  // A squeeze-excite hard-sigmoid scale divided by a constant: the hoisted clamp of s is
  // the scale (s per image and channel: N*C channels of 49), 1/6 the plan's factor.
  const std::string hard = "pointwise x=f16[4,12,7,7] s=f16[4,12,1,1] out=f16[4,12,7,7] "
                           "expr=\"x*min(max(s+3,0),6)/6\"";
  p = PlanOf(hard);
  ASSERT_TRUE(p.ok()) << p.status();
  EXPECT_TRUE(p->hoisted);
  EXPECT_EQ(p->x, Input(hard, "x"));
  EXPECT_EQ(p->param[BatchNormPlan::kScale], 2);  // $h0, after the two inputs
  EXPECT_EQ(p->factor, static_cast<float>(1.0 / 6));
  EXPECT_EQ(p->channels, 48);
  EXPECT_EQ(p->inner, 49);
  // A constant factor and a divisor: one factor, c / d rounded once.
  p = PlanOf("pointwise a=f32[3,10,7] s=f32[10,1] out=f32[3,10,7] expr=\"0.5*a*s/3\"");
  ASSERT_TRUE(p.ok()) << p.status();
  EXPECT_FALSE(p->hoisted);
  EXPECT_EQ(p->factor, static_cast<float>(0.5 / 3));
  // A sum of two per-channel tensors is hoisted into one shift.
  p = PlanOf("pointwise x=f32[4,8,5] m=f32[8,1] v=f32[8,1] b=f32[8,1] c=f32[8,1] out=f32[4,8,5] "
             "expr=\"(x-m)*rsqrt(v+1e-5)+b+c\"");
  ASSERT_TRUE(p.ok()) << p.status();
  EXPECT_TRUE(p->hoisted);
  EXPECT_EQ(p->param[BatchNormPlan::kShift], 5);  // $h0, after the five inputs
}

TEST(BatchNormTest, OtherProgramsAndLayoutsAreRefusedWithTheReason) {
  struct Case {
    const char* line;
    const char* reason;
  };
  for (const Case& c : {
           Case{"pointwise x=f32[4,8,5] m=f32[8,1] v=f32[8,1] b=f32[8,1] out=f32[4,8,5] "
                "expr=\"(x-m)*rsqrt(v+1e-5)+b+x\"",
                "more than two terms"},
           Case{"pointwise x=f32[4,8,5] m=f32[8,1] v=f32[8,1] out=f32[4,8,5] expr=\"(x-m)/sqrt(v+1e-5)\"",
                "an unexpected factor '(x-m)/sqrt(1e-05+v)'"},
           Case{"pointwise x=f32[4,8,5] g=f32[8,1] out=f32[4,8,5] expr=\"x*g/0\"",
                "a division by a constant without a finite reciprocal"},
           Case{"pointwise x=f32[4,8,5] m=f32[8,1] v=f32[8,1] out=f32[4,8,5] expr=\"(x-m)*rsqrt(x*2+v)\"",
                "rsqrt of other than v + eps"},
           Case{"pointwise x=f32[4,8,5] m=f32[8,1] v=f32[8,1] out=f32[4,8,5] expr=\"exp((x-m)*rsqrt(v+1e-5))\"",
                "an unexpected factor 'exp("},
           Case{"pointwise x=f32[4,8,5] y=f32[8,1] z=f32[8,1] out=f32[4,8,5] expr=\"x*y*z\"",
                "more factors than x, rsqrt(v + eps), g and a constant"},
           Case{"pointwise x=f32[4,8,5] y=f32[8,1] z=f32[8,1] out=f32[4,8,5] expr=\"x*y*sigmoid(z)\"",
                "more factors than x, rsqrt(v + eps), g and a constant"},
           // tanh(y) alone would be hoisted: a per-channel scale.
           Case{"pointwise x=f32[4,8,5] y=f32[8,1] out=f32[4,8,5] expr=\"y*tanh(x)\"", "an unexpected factor 'tanh(x)'"},
           // Two full tensors (merged into one dimension): no channels.
           Case{"pointwise x=f32[4,8,5] y=f32[4,8,5] out=f32[4,8,5] expr=\"relu(x+y)\"",
                "the statistics do not broadcast over x"},
           Case{"pointwise x=f32[4,8,5] m=f32[8,1] v=f32[8,1] out=f32[4,8,5] expr=\"max((x-m)*rsqrt(v+1e-5),x)\"",
                "a max that is not a clamp with a constant"},
           // Three clamps: two are taken, the third is not a sum or product.
           Case{"pointwise x=f32[4,8,5] m=f32[8,1] v=f32[8,1] out=f32[4,8,5] "
                "expr=\"max(min(max((x-m)*rsqrt(v+1e-5),0),6),1)\"",
                "a max that is not a clamp with a constant"},
           // A clamp inside the activation.
           Case{"pointwise x=f32[4,8,5] m=f32[8,1] v=f32[8,1] out=f32[4,8,5] expr=\"silu(min((x-m)*rsqrt(v+1e-5),6))\"",
                "a min that is not a clamp with a constant"},
           // A per-channel factor that even hoisted is no factor of the plan: the program's own reason.
           Case{"pointwise x=f32[64,32] m=f32[32] v=f32[32] out=f32[64,32] expr=\"(x-m)*rsqrt(v+1e-5)*exp(x)\"",
                "an unexpected factor 'exp(x)'"},
           // The statistics vary over two dimensions, or along different ones.
           Case{"pointwise x=f32[4,8,5] m=f32[4,8,1] v=f32[8,1] out=f32[4,8,5] expr=\"(x-m)*rsqrt(v+1e-5)\"",
                "is not per channel"},
           Case{"pointwise x=f32[4,8,5] m=f32[8,1] v=f32[5] out=f32[4,8,5] expr=\"(x-m)*rsqrt(v+1e-5)\"",
                "statistics along different dimensions"},
           // x broadcast, x strided, x of another dtype than the output.
           Case{"pointwise x=f32[8,1] m=f32[4,8,5] v=f32[8,1] out=f32[4,8,5] expr=\"(x-m)*rsqrt(v+1e-5)\"",
                "not of the output's shape and layout"},
           Case{"pointwise x=f32[8,6]:[1,8] m=f32[6] v=f32[6] out=f32[8,6] expr=\"(x-m)*rsqrt(v+1e-5)\"",
                "not of the output's shape and layout"},
           Case{"pointwise x=f16[8,6] m=f32[6] v=f32[6] out=f32[8,6] expr=\"(x-m)*rsqrt(v+1e-5)\"",
                "differ in dtype"},
       }) {
    StatusOr<BatchNormPlan> p = PlanOf(c.line);
    ASSERT_FALSE(p.ok()) << c.line;
    EXPECT_NE(p.status().message().find(c.reason), std::string::npos) << c.line << ": " << p.status();
  }
}

// The rules take the batchnorm implementations for batch-norm programs, on the GPU from
// shapes alone (no GPU needed), above hoisting.
TEST(BatchNormTest, RulesTakeTheBatchNormImplementations) {
  const std::string bn = "pointwise x=f32[16,64,64,64] m=f32[64,1,1] v=f32[64,1,1] g=f32[64,1,1] b=f32[64,1,1] "
                         "out=f32[16,64,64,64] expr=\"(x-m)*rsqrt(v+1e-5)*g+b\"";
  const std::string bias_act = "pointwise x=f32[16,64,64,64] b=f32[64,1,1] out=f32[16,64,64,64] expr=\"relu(x+b)\"";
  const std::string not_bn = "pointwise x=f32[16,64,64,64] m=f32[64,1,1] v=f32[64,1,1] g=f32[64,1,1] b=f32[64,1,1] "
                             "out=f32[16,64,64,64] expr=\"exp((x-m)*rsqrt(v+1e-5)*g+b)\"";
  std::vector<std::pair<Target, std::string>> targets = {{CpuTarget(), "cpu"}};
  if (Registry::Global().FindImplementation("pointwise_cuda_batchnorm") != nullptr) {
    targets.emplace_back(records::testing::TestGpu("NVIDIA H100 80GB HBM3"), "cuda");
  }
  for (const auto& [target, kind] : targets) {
    Dispatcher d(Registry::Global(), target, nullptr, DispatchOptions{});
    StatusOr<const CachedDecision*> got = d.Decide(Canonical(bn));
    ASSERT_TRUE(got.ok()) << got.status();
    EXPECT_EQ((*got)->decision.implementation->name(), "pointwise_" + kind + "_batchnorm");
    EXPECT_EQ((*got)->decision.provenance, Provenance::kHeuristic);
    // An NCHW per-channel bias (not a trailing one: the specialised chains take those).
    got = d.Decide(Canonical(bias_act));
    ASSERT_TRUE(got.ok()) << got.status();
    EXPECT_EQ((*got)->decision.implementation->name(), "pointwise_" + kind + "_batchnorm");
    got = d.Decide(Canonical(not_bn));
    ASSERT_TRUE(got.ok()) << got.status();
    EXPECT_NE((*got)->decision.implementation->name(), "pointwise_" + kind + "_batchnorm");
  }
  // The hoisted plan takes a first pass: the GPU rule takes it from 4M elements on.
  if (targets.size() > 1) {
    Dispatcher d(Registry::Global(), targets[1].first, nullptr, DispatchOptions{});
    for (const auto& [rows, name] : {std::pair<int, std::string>{4096, "pointwise_cuda_batchnorm"},
                                     std::pair<int, std::string>{64, "pointwise_cuda_interpreted"}}) {
      const std::string line = fmt::format("pointwise x=f32[{},4096] b=f32[4096] g=f32[4096] out=f32[{},4096] "
                                           "expr=\"max(min((x-b)*rsqrt(g*g+1e-5)*0.5+b,6),0)\"",
                                           rows, rows);
      StatusOr<const CachedDecision*> got = d.Decide(Canonical(line));
      ASSERT_TRUE(got.ok()) << got.status();
      EXPECT_EQ((*got)->decision.implementation->name(), name) << line;
    }
  }
}

// The GPU implementation's lanes: 16 (32 bytes) only of f16 or bf16, the default over runs
// of one channel; 8 channels-last and for f32; blocks of at most 512 with 16 lanes.
TEST(BatchNormTest, SixteenLanesOnlyOfSixteenBitTypes) {
  const Implementation* impl = Registry::Global().FindImplementation("pointwise_cuda_batchnorm");
  if (impl == nullptr) GTEST_SKIP() << "this build has no CUDA implementations (a CPU-only or sanitizer build)";
  const Target gpu = records::testing::TestGpu("NVIDIA H100 80GB HBM3");
  struct Case {
    const char* line;
    int64_t default_lanes;
    bool sixteen;
  };
  for (const Case& c : {
           Case{"pointwise x=f16[8,64,28,28] m=f16[64,1,1] v=f16[64,1,1] out=f16[8,64,28,28] expr=\"(x-m)*rsqrt(v+1e-5)\"",
                16, true},
           Case{"pointwise x=bf16[8,28,28,64] b=f32[64] out=bf16[8,28,28,64] expr=\"silu(x+b)\"", 8, true},
           Case{"pointwise x=f32[8,64,28,28] m=f32[64,1,1] v=f32[64,1,1] out=f32[8,64,28,28] expr=\"(x-m)*rsqrt(v+1e-5)\"",
                8, false},
       }) {
    const Workload w = Canonical(c.line);
    StatusOr<Config> d = impl->DefaultConfig(w, gpu);
    ASSERT_TRUE(d.ok()) << c.line << ": " << d.status();
    EXPECT_EQ(d->GetInt("vector", 0), c.default_lanes) << c.line;
    const ConfigSpace space = impl->Space(w, gpu);
    Config sixteen = *d;
    sixteen.Set("vector", int64_t{16});
    sixteen.Set("block", int64_t{512});
    EXPECT_EQ(space.Contains(sixteen), c.sixteen) << c.line;
    sixteen.Set("block", int64_t{1024});
    EXPECT_FALSE(space.Contains(sixteen)) << c.line;
  }
}

class BatchNormRuns : public ::testing::TestWithParam<DeviceKind> {};

TEST_P(BatchNormRuns, EveryImplementationMatchesTheReference) {
  const bool cpu = GetParam() == DeviceKind::kCpu;
  if (!cpu) OPSCHED_REQUIRE_GPU();
  const Target target = cpu ? CpuTarget() : *QueryTarget(Device{gpu::BackendKind(), 0});
  const Registry& registry = Registry::Global();
  const Implementation& bn = *registry.FindImplementation(cpu ? "pointwise_cpu_batchnorm" : "pointwise_cuda_batchnorm");
  std::mt19937_64 rng{std::random_device{}()};
  int runs = 0;
  std::vector<std::string> lines = {
           // NCHW, runs of 63 (one lane), 64 (8 lanes) and 196 (4 lanes).
           "pointwise a=f32[3,5,7,9] m=f32[5,1,1] v=f32[5,1,1] g=f32[5,1,1] b=f32[5,1,1] out=f32[3,5,7,9] "
           "expr=\"(a-m)*rsqrt(v+1e-5)*g+b\"",
           "pointwise a=f32[2,6,8,8] m=f32[6,1,1] v=f32[6,1,1] g=f32[6,1,1] b=f32[6,1,1] out=f32[2,6,8,8] "
           "expr=\"max((a-m)*rsqrt(v+1e-5)*g+b,0)\"",
           "pointwise a=f16[4,16,14,14] m=f16[16,1,1] v=f16[16,1,1] g=f16[16,1,1] b=f16[16,1,1] out=f16[4,16,14,14] "
           "expr=\"silu((a-m)*rsqrt(v+1e-3)*g+b)\"",
           // Channels-last: 24 channels (8 lanes), 96 (the grid a multiple of the channels), 6 (2 lanes).
           "pointwise a=bf16[2,5,5,24] m=f32[24] v=f32[24] g=f32[24] b=f32[24] out=bf16[2,5,5,24] "
           "expr=\"silu((a-m)*rsqrt(v+1e-5)*g+b)\"",
           "pointwise a=f16[2,9,9,96] m=f16[96] v=f16[96] g=f16[96] b=f16[96] out=f16[2,9,9,96] "
           "expr=\"gelu_tanh((a-m)*rsqrt(v+1e-5)*g+b)\"",
           "pointwise a=f32[7,6] m=bf16[6] v=f16[6] g=f32[6] b=f32[6] out=f32[7,6] expr=\"tanh((a-m)*rsqrt(v+1e-5)*g+b)\"",
           // g and b absent; one-element statistics; sigmoid and gelu.
           "pointwise a=f32[4,10,3] m=f32[10,1] v=f32[10,1] out=f32[4,10,3] expr=\"(a-m)*rsqrt(v+1e-3)\"",
           "pointwise a=f32[33,8] m=f32[8] v=f32[1] g=f32[8] b=f32[1] out=f32[33,8] expr=\"gelu((a-m)*rsqrt(v+0.1)*g+b)\"",
           "pointwise a=bf16[5,3,11] m=f32[1] v=f32[1] b=f32[3,1] out=bf16[5,3,11] expr=\"sigmoid((a-m)*rsqrt(v+1e-5)+b)\"",
           // Larger: many groups a thread (grid-stride).
           "pointwise a=f32[8,32,24,24] m=f32[32,1,1] v=f32[32,1,1] g=f32[32,1,1] b=f32[32,1,1] out=f32[8,32,24,24] "
           "expr=\"relu((a-m)*rsqrt(v+1e-5)*g+b)\"",
           // The folded forms: x*s+b, a per-channel bias, a per-channel scale, (x-m)*g.
           "pointwise a=f32[3,12,10] s=f32[12,1] t=f32[12,1] out=f32[3,12,10] expr=\"relu(a*s+t)\"",
           "pointwise a=bf16[4,16,9] b=bf16[16,1] out=bf16[4,16,9] expr=\"gelu(a+b)\"",
           "pointwise a=f16[6,5,40] g=f32[40] out=f16[6,5,40] expr=\"a*g\"",
           "pointwise a=f32[2,8,6,6] m=f32[8,1,1] g=f32[8,1,1] out=f32[2,8,6,6] expr=\"(a-m)*g\"",
           // Squeeze-excite gates, NCHW (N*C channels) and channels-last, with a shift.
           "pointwise a=f16[4,12,7,7] s=f16[4,12,1,1] out=f16[4,12,7,7] expr=\"a*sigmoid(s)\"",
           "pointwise a=f32[2,5,5,16] s=f32[16] b=f32[16] out=f32[2,5,5,16] expr=\"relu(a*sigmoid(s)+b)\"",
           // Clamps: ReLU6 (NCHW f16, channels-last bf16), hardtanh, a clamp after silu.
           "pointwise a=f16[3,8,5,6] m=f16[8,1,1] v=f16[8,1,1] g=f16[8,1,1] b=f16[8,1,1] out=f16[3,8,5,6] "
           "expr=\"min(max((a-m)*rsqrt(v+1e-5)*g+b,0),6)\"",
           "pointwise a=bf16[2,4,4,32] s=f32[32] t=f32[32] out=bf16[2,4,4,32] expr=\"max(0,min(a*s+t,6))\"",
           "pointwise a=f32[5,7,12] s=f32[7,1] out=f32[5,7,12] expr=\"max(min(a*s,1),-1)\"",
           "pointwise a=f32[4,6,6,16] s=f32[16] t=f32[16] out=f32[4,6,6,16] expr=\"min(silu(a*s+t),2.5)\"",
           // Hoisted plans: a per-channel factor from two tensors, channels-last and NCHW.
           "pointwise x=f32[48,40] b=f32[40] g=f32[40] out=f32[48,40] expr=\"max(min((x-b)*rsqrt(g*g+1e-5)*0.5+b,6),0)\"",
           // A constant factor (folded into the scale): the canonical 0.5*(a-b)*$h0.
           "pointwise a=f16[48,40] b=f32[40] g=f32[40] out=f16[48,40] expr=\"max(min((a-b)*rsqrt(g*g+1e-5)*0.5+b,6),0)\"",
           "pointwise a=f32[3,10,7] s=f32[10,1] t=f32[10,1] out=f32[3,10,7] expr=\"relu(-1.5*a*s+t)\"",
           // Divided by a constant (folded into the factor as 1/d): a hard-sigmoid
           // squeeze-excite scale (hoisted, N*C channels) and a channels-last scale.
           "pointwise a=f16[4,12,7,7] s=f16[4,12,1,1] out=f16[4,12,7,7] expr=\"a*min(max(s+3,0),6)/6\"",
           "pointwise a=f32[2,5,5,16] s=f32[16] t=f32[16] out=f32[2,5,5,16] expr=\"a*s/3+t\"",
           "pointwise a=bf16[4,16,9,9] m=f32[16,1,1] v=f32[16,1,1] g=f32[16,1,1] out=bf16[4,16,9,9] "
           "expr=\"relu((a-m)*(g*rsqrt(v+1e-3)+1))\"",
           // Channels-last with more channels than a block's threads read (the general
           // kernel, clamps and a factor, stages only the block's span from its first
           // channel mod C), odd runs of groups; and 4099 (no grid step a multiple of the
           // channels: each thread reads its own).
           "pointwise a=f32[24,4096] b=f32[4096] g=f32[4096] out=f32[24,4096] "
           "expr=\"max(min((a-b)*rsqrt(g*g+1e-5)*0.5+b,6),0)\"",
           "pointwise a=f16[24,1544] m=f32[1544] v=f32[1544] out=f16[24,1544] expr=\"(a-m)*rsqrt(v+1e-5)\"",
           "pointwise a=f32[3,4099] s=f32[4099] t=f32[4099] out=f32[3,4099] expr=\"a*s+t\"",
           // Edges: one element, empty.
           "pointwise a=f32[1] m=f32[1] v=f32[1] g=f32[1] b=f32[1] out=f32[1] expr=\"(a-m)*rsqrt(v+1e-5)*g+b\"",
           "pointwise a=f32[0,4,5] m=f32[4,1] v=f32[4,1] out=f32[0,4,5] expr=\"(a-m)*rsqrt(v+1e-5)\"",
  };
  if (!cpu) {
    // Channels-last and large enough that a thread of the one-wave grid loads several
    // groups before computing any (GroupsAhead), with groups left over: the hoisted plan
    // (a dependent launch after its first pass) and a plain one. GPU only: the CPU
    // kernels have no such loop, and under the sanitizers their runs exceed the test's time.
    lines.push_back("pointwise a=f32[2311,1024] b=f32[1024] g=f32[1024] out=f32[2311,1024] "
                    "expr=\"max(min((a-b)*rsqrt(g*g+1e-5)*0.5+b,6),0)\"");
    lines.push_back("pointwise a=bf16[2311,1024] m=f32[1024] v=f32[1024] g=f32[1024] b=f32[1024] out=bf16[2311,1024] "
                    "expr=\"silu((a-m)*rsqrt(v+1e-5)*g+b)\"");
  }
  for (const std::string& line : lines) {
    const Workload w = Canonical(line);
    OPSCHED_ASSERT_OK(Annotate(bn.Applicable(w, target), line));
    // In place where the first input (in name order) is x.
    StatusOr<std::shared_ptr<const pointwise::Compiled>> compiled = pointwise::CompiledFor(w);
    ASSERT_TRUE(compiled.ok()) << compiled.status();
    const bool can_alias = (*compiled)->inputs[0].shape() == (*compiled)->outputs[0].shape();
    for (bool in_place : {false, true}) {
      if (in_place && !can_alias) continue;
      TrialOptions options;
      options.seed = rng();
      options.in_place = in_place;
      int n = 0;
      OPSCHED_EXPECT_OK(Annotate(testing::CheckAllImplementations(registry, w, target, options, 8, rng, &n),
                                 fmt::format("{}{}", line, in_place ? " (in place)" : "")));
      EXPECT_GT(n, 0) << line;
      runs += n;
    }
  }
  EXPECT_GE(runs, 36);
}

INSTANTIATE_TEST_SUITE_P(Devices, BatchNormRuns, ::testing::Values(DeviceKind::kCpu, DeviceKind::kCuda),
                         [](const auto& info) { return std::string(DeviceKindName(info.param)); });

}  // namespace
}  // namespace opsched
