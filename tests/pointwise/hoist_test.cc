// Hoisting (ops/pointwise/pointwise_hoist.h): which subexpressions go to a first pass,
// how the passes and the workspace are laid out, and that the hoisted implementations
// write the very bits the interpreter writes (CPU, and the GPU where there is one), on
// top of the reference checks of pointwise_test.
#include <gtest/gtest.h>

#include <cstring>
#include <random>

#include "core/format.h"
#include "ops/pointwise/pointwise_def.h"
#include "strategies/dispatcher.h"
#include "tests/records/record_factory.h"
#include "tests/test_util.h"
#include "tuner/trial.h"

namespace opsched {
namespace {

using pointwise::Compiled;
using pointwise::Hoisted;

Workload Canonical(const std::string& line) {
  StatusOr<Workload> w = Registry::Global().ParseCanonical(line);
  EXPECT_TRUE(w.ok()) << line << ": " << w.status();
  return w.ok() ? *w : Workload();
}

std::shared_ptr<const Compiled> CompiledOf(const std::string& line) {
  StatusOr<std::shared_ptr<const Compiled>> c = pointwise::CompiledFor(Canonical(line));
  EXPECT_TRUE(c.ok()) << line << ": " << c.status();
  return c.ok() ? *c : nullptr;
}

TEST(HoistTest, HoistsTheLargestSubexpressionOverFewerDimensions) {
  // The normalise-scale-clamp tail of bench/suites/pointwise.txt: 0.5*rsqrt(g*g+1e-5)
  // varies over columns only (4096 values, each reused by 4096 rows).
  auto c = CompiledOf("pointwise x=f32[4096,4096] b=f32[4096] g=f32[4096] out=f32[4096,4096] "
                      "expr=\"max(min((x-b)*rsqrt(g*g+1e-5)*0.5+b, 6), 0)\"");
  ASSERT_TRUE(c && c->hoisted);
  const Hoisted& h = *c->hoisted;
  EXPECT_EQ(pointwise::ProgramText(h.program), "out=max(0,min($h0*(x-b)+b,6))");
  EXPECT_EQ(h.program.inputs, (std::vector<std::string>{"b", "g", "x", "$h0"}));
  EXPECT_EQ(h.ops_hoisted, 4);  // g*g, +1e-5, rsqrt, *0.5
  ASSERT_EQ(h.passes.size(), 1u);
  EXPECT_EQ(h.passes[0].inputs, std::vector<int>{1});  // reads g
  EXPECT_EQ(h.passes[0].values, std::vector<int>{0});
  EXPECT_EQ(h.passes[0].bytecode.numel, 4096);
  EXPECT_EQ(h.workspace_bytes, 4096u * 4);
  // The main program: 3 loads, 2 constants, sub, mul, add, min, max and the store; the
  // program before loaded g and not $h0, and had 2 constants and 4 operations more.
  EXPECT_EQ(h.bytecode.num_instructions, 11);
  EXPECT_EQ(c->bytecode.num_instructions, 17);
  EXPECT_EQ(h.bytecode.numel, c->bytecode.numel);
}

TEST(HoistTest, NothingToHoist) {
  for (const char* line : {
           // Every input varies over every dimension.
           "pointwise c=f32[50,128] f=f32[50,128] g=f32[50,128] i=f32[50,128] o=f32[50,128] c2=f32[50,128] "
           "h=f32[50,128] expr=\"c2=sigmoid(f)*c+sigmoid(i)*tanh(g); h=sigmoid(o)*tanh(c2)\"",
           // r*w varies over both dimensions (rows and columns).
           "pointwise x=f32[64,256] r=f32[64,1] w=f32[256] out=f32[64,256] expr=\"x*r*w\"",
           // Each value of exp(b) would be reused 4 times, fewer than kMinHoistReuse.
           "pointwise a=f32[4,8] b=f32[8] out=f32[4,8] expr=\"a*exp(b)\"",
           // A bare broadcast load is no operation; a constant varies over nothing.
           "pointwise a=f32[64,256] b=f32[256] out=f32[64,256] expr=\"a*exp(2)+b\"",
           // No element to compute.
           "pointwise a=f32[0,256] b=f32[256] out=f32[0,256] expr=\"a*exp(b)\"",
       }) {
    auto c = CompiledOf(line);
    ASSERT_TRUE(c);
    EXPECT_FALSE(c->hoisted) << line;
    StatusOr<std::shared_ptr<const Compiled>> h = pointwise::HoistedOf(Canonical(line));
    EXPECT_FALSE(h.ok()) << line;
    EXPECT_NE(h.status().message().find("nothing to hoist"), std::string_view::npos) << h.status();
  }
}

TEST(HoistTest, ValuesOverOtherDimensionsTakeAPassEachAndEqualOnesShareAValue) {
  // (1+sqrt(w))*sigmoid(s) and sigmoid(s) vary over the last dimension (one pass, two
  // values), exp(r) over the first (a second pass); p reuses o's exp(r).
  auto c = CompiledOf("pointwise x=f32[16,8,32] r=f32[16,1,1] w=f32[32] s=f32[32] o=f32[16,8,32] p=f32[16,8,32] "
                      "q=f32[16,8,32] expr=\"o=x*exp(r)+(sqrt(w)+1)*sigmoid(s); p=x-exp(r); q=x/sigmoid(s)\"");
  ASSERT_TRUE(c && c->hoisted);
  const Hoisted& h = *c->hoisted;
  EXPECT_EQ(pointwise::ProgramText(h.program), "o=$h0+$h1*x; p=x-$h1; q=x/$h2");
  ASSERT_EQ(h.passes.size(), 2u);
  EXPECT_EQ(h.passes[0].values, (std::vector<int>{0, 2}));  // over [1,1,32]
  EXPECT_EQ(h.passes[0].bytecode.numel, 32);
  EXPECT_EQ(h.passes[0].bytecode.num_outputs, 2);
  EXPECT_EQ(h.passes[0].inputs, (std::vector<int>{1, 2}));  // s and w
  EXPECT_EQ(h.passes[1].values, std::vector<int>{1});  // over [16,1,1]
  EXPECT_EQ(h.passes[1].bytecode.numel, 16);
  EXPECT_EQ(h.passes[1].inputs, std::vector<int>{0});  // r
  // Each value 16-byte aligned: 128, 64 and 128 bytes.
  EXPECT_EQ(h.offsets, (std::vector<size_t>{0, 128, 192}));
  EXPECT_EQ(h.workspace_bytes, 320u);
  EXPECT_EQ(h.ops_hoisted, 6);  // sqrt, +1, sigmoid and * of o; exp; sigmoid of q
}

// The GPU rule (strategies/pointwise_strategy.cc) takes the hoisted form where at least
// 2 operations are hoisted over at least 4M elements, from shapes alone (no GPU needed);
// where the hoisted main program is batch-norm inference, the batchnorm implementation
// under the same bounds.
TEST(HoistTest, RuleTakesTheHoistedFormForTwoOperationsOverFourMillionElements) {
  if (Registry::Global().FindImplementation("pointwise_cuda_hoisted") == nullptr) {
    GTEST_SKIP() << "this build has no CUDA implementations (a CPU-only or sanitizer build)";
  }
  Dispatcher d(Registry::Global(), records::testing::TestGpu("NVIDIA H100 80GB HBM3"), nullptr, DispatchOptions{});
  struct Case {
    const char* line;
    const char* served;
  };
  for (const Case& c : {
           // 4 operations hoisted, 16M elements, and the main program batch-norm
           // inference: the batchnorm implementation's hoisted plan (above hoisting).
           Case{"pointwise x=f32[4096,4096] b=f32[4096] g=f32[4096] out=f32[4096,4096] "
                "expr=\"max(min((x-b)*rsqrt(g*g+1e-5)*0.5+b, 6), 0)\"",
                "pointwise_cuda_batchnorm"},
           // 4 operations hoisted, 16M elements, a main program of other form.
           Case{"pointwise x=f32[4096,4096] b=f32[4096] g=f32[4096] out=f32[4096,4096] "
                "expr=\"exp(max(min((x-b)*rsqrt(g*g+1e-5)*0.5+b, 6), 0))\"",
                "pointwise_cuda_hoisted"},
           // 3 operations (g*rsqrt(v+1e-5)), 4M elements exactly (batch-norm with an exp
           // after it: not the batchnorm implementations' chain).
           Case{"pointwise x=f32[16,64,64,64] m=f32[64,1,1] v=f32[64,1,1] g=f32[64,1,1] b=f32[64,1,1] "
                "out=f32[16,64,64,64] expr=\"exp((x-m)*rsqrt(v+1e-5)*g+b)\"",
                "pointwise_cuda_hoisted"},
           // The same below 4M elements.
           Case{"pointwise x=f32[15,64,64,64] m=f32[64,1,1] v=f32[64,1,1] g=f32[64,1,1] b=f32[64,1,1] "
                "out=f32[15,64,64,64] expr=\"exp((x-m)*rsqrt(v+1e-5)*g+b)\"",
                "pointwise_cuda_interpreted"},
           // One operation hoisted (silu(b)), 16M elements: not worth a pass, though the
           // main program x*$h0 is a per-channel scale.
           Case{"pointwise x=f32[4096,4096] b=f32[4096] out=f32[4096,4096] expr=\"x*silu(b)\"",
                "pointwise_cuda_interpreted"},
           // A known chain stays specialised (bias+gelu hoists nothing anyway).
           Case{"pointwise a=f32[4096,4096] b=f32[4096] out=f32[4096,4096] expr=\"gelu(a+b)\"",
                "pointwise_cuda_specialised"},
       }) {
    StatusOr<Workload> w = Registry::Global().ParseCanonical(c.line);
    ASSERT_TRUE(w.ok()) << w.status();
    StatusOr<const CachedDecision*> got = d.Decide(*w);
    ASSERT_TRUE(got.ok()) << c.line << ": " << got.status();
    EXPECT_EQ((*got)->decision.implementation->name(), c.served) << c.line << "\n" << (*got)->decision.reason;
    EXPECT_EQ((*got)->decision.provenance, Provenance::kHeuristic);
  }
}

// The hoisted implementation against the interpreter on the same inputs: equal bits.
class HoistedMatchesInterpreter : public ::testing::TestWithParam<DeviceKind> {};

TEST_P(HoistedMatchesInterpreter, BitForBit) {
  const bool cpu = GetParam() == DeviceKind::kCpu;
  if (!cpu) OPSCHED_REQUIRE_GPU();
  const Target target = cpu ? CpuTarget() : *QueryTarget(Device{gpu::BackendKind(), 0});
  const Registry& registry = Registry::Global();
  const Implementation& interpreted =
      *registry.FindImplementation(cpu ? "pointwise_cpu_interpreted" : "pointwise_cuda_interpreted");
  const Implementation& hoisted = *registry.FindImplementation(cpu ? "pointwise_cpu_hoisted" : "pointwise_cuda_hoisted");
  std::mt19937_64 rng{std::random_device{}()};
  int compared = 0;
  for (const char* line : {
           "pointwise x=f32[257,96] b=f32[96] g=f32[96] out=f32[257,96] expr=\"max(min((x-b)*rsqrt(g*g+1e-5)*0.5+b,6),0)\"",
           "pointwise x=f16[8,24,9,9] s=f16[8,24,1,1] out=f16[8,24,9,9] expr=\"x*min(max(s+3,0),6)/6\"",
           "pointwise x=bf16[33,40] m=f32[33,1] v=bf16[33,1] out=f32[33,40] expr=\"(x-m)*rsqrt(v+1e-5)*exp(m)\"",
           "pointwise x=f32[16,8,32] r=f32[16,1,1] w=f32[32] s=f32[32] o=f32[16,8,32] p=bf16[16,8,32] "
           "expr=\"o=x*exp(r)+(sqrt(w)+1)*sigmoid(s); p=x-sigmoid(s)\"",
           "pointwise x=f32[40,33]:[1,40] b=f32[33] out=f32[40,33] expr=\"relu(x+gelu(b)*tanh(b))\"",  // strided
           "pointwise b=f32[1000] out=f32[64,1000] expr=\"silu(b)*2\"",  // the whole output broadcast
           "pointwise a=f32[64,96] g=f32[96] a2=f32[64,96] expr=\"a2=a*sigmoid(g)+a\"",  // in place too
       }) {
    for (bool in_place : {false, true}) {
      const Workload w = Canonical(line);
      if (in_place && w.tensors()[0].desc.shape() != *w.GetInts("shape")) continue;
      TrialOptions options;
      options.seed = rng();
      options.in_place = in_place;
      auto trial = Trial::Create(registry, w, target, options);
      ASSERT_TRUE(trial.ok()) << line << ": " << trial.status();
      const Config config = *hoisted.DefaultConfig(w, target);
      OPSCHED_ASSERT_OK(Annotate((*trial)->Run(interpreted, *interpreted.DefaultConfig(w, target)), line));
      std::vector<std::vector<uint8_t>> want;
      for (const HostTensor& t : (*trial)->outputs()) {
        want.emplace_back(static_cast<const uint8_t*>(t.data()), static_cast<const uint8_t*>(t.data()) + t.storage_bytes());
      }
      OPSCHED_ASSERT_OK(Annotate((*trial)->Run(hoisted, config), line));
      OPSCHED_EXPECT_OK(Annotate((*trial)->Check(hoisted), line));
      ASSERT_EQ((*trial)->outputs().size(), want.size());
      for (size_t o = 0; o < want.size(); ++o) {
        const HostTensor& got = (*trial)->outputs()[o];
        ASSERT_EQ(got.storage_bytes(), want[o].size());
        EXPECT_EQ(std::memcmp(got.data(), want[o].data(), want[o].size()), 0)
            << line << (in_place ? " (in place)" : "") << ": output " << o << " differs from the interpreter's";
        ++compared;
      }
    }
  }
  EXPECT_GE(compared, 8);
}

INSTANTIATE_TEST_SUITE_P(Devices, HoistedMatchesInterpreter, ::testing::Values(DeviceKind::kCpu, DeviceKind::kCuda),
                         [](const auto& info) { return std::string(DeviceKindName(info.param)); });

}  // namespace
}  // namespace opsched
