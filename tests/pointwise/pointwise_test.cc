// The pointwise op: every CPU implementation against the float64 reference (poisoned
// outputs, fresh inputs) over broadcasting edge cases, empty and one-element tensors,
// strided inputs, in place, every dtype and function, the LSTM cell; the Runtime entry;
// the canonical key of equivalent programs; parse and validation errors with columns.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstring>
#include <random>

#include "core/format.h"
#include "ops/pointwise/pointwise_accumulate.h"
#include "ops/pointwise/pointwise_compile.h"
#include "ops/pointwise/pointwise_def.h"
#include "ops/pointwise/pointwise_reference.h"
#include "opsched/runtime.h"
#include "tests/ops/op_test_util.h"
#include "tests/records/record_factory.h"
#include "tests/test_util.h"
#include "tuner/trial.h"

namespace opsched {
namespace {

using testing::CheckAllImplementations;
using testing::CheckRuntimeCall;

class PointwiseTest : public ::testing::TestWithParam<DeviceKind> {
 protected:
  void SetUp() override {
    if (GetParam() != DeviceKind::kCpu) OPSCHED_REQUIRE_GPU();
    target_ = GetParam() == DeviceKind::kCpu ? CpuTarget() : *QueryTarget(Device{gpu::BackendKind(), 0});
  }
  bool OnCpu() const { return GetParam() == DeviceKind::kCpu; }
  std::string Specialised() const { return OnCpu() ? "pointwise_cpu_specialised" : "pointwise_cuda_specialised"; }
  Workload Canonical(const std::string& line) {
    StatusOr<Workload> w = registry_.ParseCanonical(line);
    EXPECT_TRUE(w.ok()) << line << ": " << w.status();
    return w.ok() ? *w : Workload();
  }
  std::string Key(const std::string& line) { return Canonical(line).ToString(); }
  std::string ErrorOf(const std::string& line) {
    StatusOr<Workload> w = registry_.ParseCanonical(line);
    return w.ok() ? "ok: " + w->ToString() : std::string(w.status().message());
  }
  // Every implementation that applies, every config, against the reference.
  Status CheckLine(const std::string& line, bool in_place = false, int* runs_out = nullptr) {
    TrialOptions options;
    options.seed = rng_();
    options.in_place = in_place;
    int runs = 0;
    const Workload w = Canonical(line);
    Status s = Annotate(CheckAllImplementations(registry_, w, target_, options, 8, rng_, &runs), line);
    if (s.ok() && runs == 0) s = absl::InternalError(line + ": nothing ran");
    if (runs_out) *runs_out += runs;
    return s;
  }
  // `impl` with each of `configs` on fresh inputs of `line` out of place, and in place
  // too where `in_place` (the first output aliasing the first input), against the
  // reference; the first failure, naming the line. *runs counts the checked runs.
  Status CheckConfigsOf(const std::string& line, const Implementation& impl, const std::vector<Config>& configs,
                        bool in_place, int* runs) {
    for (const bool alias : {false, true}) {
      if (alias && !in_place) continue;
      TrialOptions options;
      options.seed = rng_();
      options.in_place = alias;
      auto trial = Trial::Create(registry_, Canonical(line), target_, options);
      if (!trial.ok()) return Annotate(trial.status(), line);
      OPSCHED_RETURN_IF_ERROR(Annotate(testing::CheckConfigs(**trial, impl, configs, alias, runs), line));
    }
    return absl::OkStatus();
  }
  // What `impl`'s rule (DefaultConfig) serves for `line` on an H100, as config text.
  std::string RuleOnH100(const Implementation& impl, const std::string& line) {
    StatusOr<Config> c = impl.DefaultConfig(Canonical(line), records::testing::TestGpu("NVIDIA H100 80GB HBM3"));
    EXPECT_TRUE(c.ok()) << line << ": " << c.status();
    return c.ok() ? c->ToString() : std::string();
  }
  bool Applies(const std::string& impl, const std::string& line) {
    return registry_.FindImplementation(impl)->Applicable(Canonical(line), target_).ok();
  }
  const Registry& registry_ = Registry::Global();
  Target target_;
  std::mt19937_64 rng_{std::random_device{}()};
};

TEST_P(PointwiseTest, CanonicalLineIsNormalisedAndRoundTrips) {
  const std::string key = Key("pointwise a=f32[64,1024] b=f32[1024] out=f32[64,1024] expr=\"relu(a+b)*0.5\"");
  EXPECT_EQ(key, "pointwise a=f32[64,1024] b=f32[1024] expr=\"out=0.5*relu(a+b)\" shape=64,1024 out=f32");
  EXPECT_EQ(Key(key), key);  // the canonical line is itself canonical
  for (const char* same : {
           "pointwise b=f32[1024] a=f32[64,1024] out=f32[64,1024] expr=\" ( relu( (b) + a ) ) * 0.50 \"",
           "pointwise a=f32[64,1024] b=f32[1024] out=f32[64,1024] expr=\"out = 5e-1 * f32(relu(b+a))\"",
           "pointwise a=f32[64,1024] b=f32[1024] out=f32[64,1024] expr=\"t=a+b; out=relu(t)*0.5\"",
       }) {
    EXPECT_EQ(Key(same), key) << same;
  }
  // Commutative chains sort their operands; non-commutative ones keep them.
  EXPECT_EQ(Key("pointwise a=f32[4] b=f32[4] c=f32[4] o=f32[4] expr=\"c*(b*a) + max(b, a) - min(c,a)\""),
            Key("pointwise a=f32[4] b=f32[4] c=f32[4] o=f32[4] expr=\"max(a,b) + a*b*c - min(a,c)\""));
  EXPECT_NE(Key("pointwise a=f32[4] b=f32[4] o=f32[4] expr=\"a-b\""),
            Key("pointwise a=f32[4] b=f32[4] o=f32[4] expr=\"b-a\""));
  EXPECT_NE(Key("pointwise a=f32[4] b=f32[4] o=f32[4] expr=\"a/b/a\""),
            Key("pointwise a=f32[4] b=f32[4] o=f32[4] expr=\"a/(b/a)\""));
  // Negation folds into constants; double negation vanishes; parentheses stay minimal.
  EXPECT_EQ(*Canonical("pointwise a=f32[4] o=f32[4] expr=\"--a * -(2) - (a - 1) - -a\"").GetString("expr"),
            "o=-2*a-(a-1)- -a");
  // Several outputs, in name order, assigned names inlined.
  const Workload lstm = Canonical(
      "pointwise i=f32[50,128] f=f32[50,128] g=f32[50,128] o=f32[50,128] c=f32[50,128] h=f32[50,128] "
      "c2=f32[50,128] expr=\"c2 = sigmoid(f)*c + sigmoid(i)*tanh(g); h = sigmoid(o)*tanh(c2)\"");
  EXPECT_EQ(lstm.ToString(),
            "pointwise c=f32[50,128] f=f32[50,128] g=f32[50,128] i=f32[50,128] o=f32[50,128] "
            "expr=\"c2=c*sigmoid(f)+sigmoid(i)*tanh(g); h=sigmoid(o)*tanh(c*sigmoid(f)+sigmoid(i)*tanh(g))\" "
            "shape=50,128 c2=f32 h=f32");
}

TEST_P(PointwiseTest, ParseErrorsNameTheColumn) {
  const std::string ab = "pointwise a=f32[4,8] b=f32[8] out=f32[4,8] expr=";
  EXPECT_EQ(ErrorOf(ab + "\"foo(a)+b\""), "expr column 1: unknown function 'foo'");
  EXPECT_EQ(ErrorOf(ab + "\"a + max(b)\""), "expr column 5: max takes 2 arguments, got 1");
  EXPECT_EQ(ErrorOf(ab + "\"a+b*zz\""), "expr column 5: undefined name 'zz'");
  EXPECT_EQ(ErrorOf(ab + "\"a+(b\""), "expr column 5: expected ')'");
  EXPECT_EQ(ErrorOf(ab + "\"a+b)\""), "expr column 4: expected an operator, ';' or the end, got ')'");
  EXPECT_EQ(ErrorOf(ab + "\"a+1.2.3\""), "expr column 6: expected an operator, ';' or the end, got '.'");
  EXPECT_EQ(ErrorOf(ab + "\"out=relu(a)\""),
            "expr column 1: input 'b' is declared but not used (or an output not assigned)");
  EXPECT_EQ(ErrorOf("pointwise a=f32[4] b=f32[4] expr=\"a+b\""),
            "expr column 1: output not assigned: the expression uses every declared tensor (declare an output "
            "tensor, or write out=...)");
  EXPECT_EQ(ErrorOf("pointwise a=f32[4] b=f32[4] o=f32[4] p=f32[4] expr=\"o=a+b; t=a\""),
            "expr column 8: 't' is assigned but never used and is no declared tensor (declare it to make it an "
            "output)");
  EXPECT_EQ(ErrorOf("pointwise a=f32[4] o=f32[4] expr=\"o=h+a; h=a\""),
            "expr column 3: 'h' is used before it is assigned");
  EXPECT_EQ(ErrorOf("pointwise a=f32[4,8] b=f32[7] out=f32[4,8] expr=\"relu(a + b)\""),
            "pointwise: expr column 10: broadcasting shape mismatch: input 'b' [7] does not broadcast to the "
            "outputs' shape [4,8]");
  EXPECT_EQ(ErrorOf("pointwise a=f32[4,8] b=f32[2,4,8] out=f32[4,8] expr=\"a*b\""),
            "pointwise: expr column 3: broadcasting shape mismatch: input 'b' [2,4,8] does not broadcast to the "
            "outputs' shape [4,8]");
  // Bad lines beyond the program.
  EXPECT_EQ(ErrorOf("pointwise a=i32[4] out=f32[4] expr=\"a\""), "pointwise: tensor 'a' is i32, expected f32, f16 or bf16");
  EXPECT_EQ(ErrorOf("pointwise a=f32[4] out=f32[4] axis=1 expr=\"a\""),
            "pointwise: unknown attribute 'axis' (expected expr, shape, or an output's dtype: name=f32, f16 or bf16)");
  EXPECT_EQ(ErrorOf("pointwise a=f32[4] out=f32[4]"), "pointwise: needs expr=\"...\", the program (e.g. expr=\"relu(a+b)*0.5\")");
  EXPECT_EQ(ErrorOf("pointwise a=f32[4] o=f32[4] p=f32[5] expr=\"o=a; p=a\""),
            "pointwise: output 'p' is f32[5], but the outputs' shape is [4]");
  EXPECT_EQ(ErrorOf("pointwise a=f32[4] o=f32[4]:[2] expr=\"a\""), "pointwise: output 'o' must be contiguous");
  // Bad input never crashes: deep nesting and huge expansions are refused.
  EXPECT_EQ(ErrorOf("pointwise a=f32[4] o=f32[4] expr=\"" + std::string(100, '(') + "a" + std::string(100, ')') + "\""),
            "expr column 66: nested more than 64 deep");
  std::string doubling = "t0=a";
  for (int k = 1; k <= 20; ++k) doubling += fmt::format("; t{}=t{}*t{}", k, k - 1, k - 1);
  EXPECT_THAT(ErrorOf("pointwise a=f32[4] o=f32[4] expr=\"" + doubling + "; o=t20\""),
              ::testing::MatchesRegex("expr column [0-9]+: 't1[0-9]' expands to more than 4096 nodes"));
}

// The float64 reference splits the elements over threads (the tuner's host check of a
// 64M-element chain was one core's work, twice): the same bits as one thread, values and
// bounds, at a size that leaves the pieces uneven, with broadcasts along both dimensions,
// NaN, infinities and two outputs.
TEST_P(PointwiseTest, ReferenceOnThreadsMatchesOneThreadBitForBit) {
  if (!OnCpu()) GTEST_SKIP() << "host only: runs with the CPU parameter";
  const int64_t rows = 3 * pointwise::kReferenceChunk / 1001 + 7, cols = 1001;  // 4 pieces, the last short
  const std::string line = fmt::format(
      "pointwise a=f32[{0},{1}] b=f32[{1}] c=f32[{0},1] o=f32[{0},{1}] p=f32[{0},{1}] "
      "expr=\"o=tanh(a*b)/c+exp(-abs(a)); p=sqrt(abs(a-c))*sigmoid(b)\"", rows, cols);
  auto c = pointwise::CompiledFor(Canonical(line));
  ASSERT_TRUE(c.ok()) << c.status();
  std::vector<HostTensor> inputs;
  std::mt19937_64 rng(rng_());
  std::normal_distribution<double> normal(0, 2);
  for (const TensorDesc& d : {TensorDesc::Contiguous(DType::kF32, {rows, cols}), TensorDesc::Contiguous(DType::kF32, {cols}),
                              TensorDesc::Contiguous(DType::kF32, {rows, 1})}) {
    HostTensor t(d);
    for (int64_t i = 0; i < d.numel(); ++i) t.Set(i, normal(rng));
    inputs.push_back(std::move(t));
  }
  inputs[0].Set(5, std::nan(""));
  inputs[0].Set(rows * cols - 1, std::numeric_limits<double>::infinity());
  inputs[2].Set(rows / 2, 0.0);  // a division by zero in the middle range
  const Dims shape = (*c)->outputs[0].shape();
  const pointwise::ReferenceValues one = pointwise::EvaluateReference((*c)->program, inputs, shape, true, 1);
  for (int threads : {2, 3, 5}) {
    const pointwise::ReferenceValues many = pointwise::EvaluateReference((*c)->program, inputs, shape, true, threads);
    ASSERT_EQ(many.values.size(), 2u);
    for (size_t o = 0; o < 2; ++o) {
      ASSERT_EQ(many.values[o].size(), static_cast<size_t>(rows * cols));
      EXPECT_EQ(std::memcmp(many.values[o].data(), one.values[o].data(), rows * cols * sizeof(double)), 0)
          << threads << " threads, output " << o;
      EXPECT_EQ(std::memcmp(many.bounds[o].data(), one.bounds[o].data(), rows * cols * sizeof(double)), 0)
          << threads << " threads, output " << o;
    }
  }
  EXPECT_TRUE(std::isnan(one.values[0][5]));
}

// exp(-abs(x)) and sigmoid(x) at x = -inf are exactly 0 in f32 too: their bound is 0,
// not (a rounding that grows with |x|) * 0 = NaN, which no finite result passes. Every
// implementation is then checked on inputs with NaN and infinities.
TEST_P(PointwiseTest, InfiniteInputsGiveFiniteBoundsWhereTheResultIsFinite) {
  const std::string expr = "tanh(sigmoid(x)*2-1)*exp(-abs(x))+relu(x)*0.5";
  auto c = pointwise::CompiledFor(Canonical(fmt::format("pointwise x=f32[3] out=f32[3] expr=\"{}\"", expr)));
  ASSERT_TRUE(c.ok()) << c.status();
  HostTensor x(TensorDesc::Contiguous(DType::kF32, {3}));
  const double inf = std::numeric_limits<double>::infinity();
  x.Set(0, -inf);
  x.Set(1, inf);
  x.Set(2, 1.0);
  const pointwise::ReferenceValues r = pointwise::EvaluateReference((*c)->program, {x}, {3}, true, 1);
  EXPECT_EQ(r.values[0][0], 0.0);
  EXPECT_EQ(r.bounds[0][0], 0.0);
  EXPECT_EQ(r.values[0][1], inf);
  EXPECT_GT(r.bounds[0][2], 0.0);
  EXPECT_TRUE(std::isfinite(r.bounds[0][2]));
  TrialOptions options;
  options.seed = rng_();
  options.generator.special_value_fraction = 0.2;
  int runs = 0;
  const std::string line = fmt::format("pointwise x=f32[4099] out=f32[4099] expr=\"{}\"", expr);
  OPSCHED_EXPECT_OK(CheckAllImplementations(registry_, Canonical(line), target_, options, 4, rng_, &runs));
  EXPECT_GT(runs, 0);
}

// The operand needing more slots is computed first, whichever side it is on: a product
// of a sum and a difference needs three slots, the scaled term one, so computing the
// scaled term first would take four, the product first takes three. The subtraction's
// operands keep their places (its result is checked against the reference on every
// implementation).
TEST_P(PointwiseTest, BytecodeComputesTheOperandNeedingMoreSlotsFirst) {
  for (const char* e : {"a*0.5 - (b+c)*(d-e)", "(b+c)*(d-e) - a*0.5"}) {
    const std::string line = fmt::format(
        "pointwise a=f32[33,17] b=f32[17] c=f32[33,17] d=f32[33,1] e=f32[33,17] out=f32[33,17] expr=\"{}\"", e);
    auto c = pointwise::CompiledFor(Canonical(line));
    ASSERT_TRUE(c.ok()) << c.status();
    EXPECT_EQ((*c)->bytecode.num_slots, 3) << e << "\n" << pointwise::Disassemble((*c)->bytecode, (*c)->program);
    EXPECT_EQ((*c)->accumulator.num_spills, 2) << e;
    OPSCHED_EXPECT_OK(CheckLine(line));
  }
}

TEST_P(PointwiseTest, BytecodeSharesSubexpressionsAndReusesSlots) {
  const Workload w = Canonical(
      "pointwise i=f32[50,128] f=f32[50,128] g=f32[50,128] o=f32[50,128] c=f32[50,128] h=f32[50,128] "
      "c2=f32[50,128] expr=\"c2 = sigmoid(f)*c + sigmoid(i)*tanh(g); h = sigmoid(o)*tanh(c2)\"");
  auto c = pointwise::CompiledFor(w);
  ASSERT_TRUE(c.ok()) << c.status();
  const pointwise::Bytecode& bc = (*c)->bytecode;
  // 5 loads, 3 sigmoid, 2 tanh, 3 mul, 1 add (c' computed once), 2 stores.
  EXPECT_EQ(bc.num_instructions, 16) << pointwise::Disassemble(bc, (*c)->program);
  EXPECT_EQ(bc.num_slots, 3) << pointwise::Disassemble(bc, (*c)->program);
  EXPECT_EQ(bc.rank, 1);  // [50,128] merged
  EXPECT_EQ(bc.numel, 6400);
  // Broadcast strides: [64,1024] + [1024] keeps two dimensions, the bias's outer stride 0.
  auto bias = pointwise::CompiledFor(Canonical("pointwise a=f32[64,1024] b=f32[1024] out=f32[64,1024] expr=\"a+b\""));
  ASSERT_TRUE(bias.ok());
  EXPECT_EQ((*bias)->bytecode.rank, 2);
  EXPECT_EQ((*bias)->bytecode.strides[1][0], 0);
  EXPECT_EQ((*bias)->bytecode.strides[1][1], 1);
}

TEST_P(PointwiseTest, BroadcastingEdgeCases) {
  for (const char* line : {
           "pointwise a=f32[3,5] s=f32[1] out=f32[3,5] expr=\"a*s+1\"",                 // scalar-shaped [1]
           "pointwise a=f32[3,5] s=f32[] out=f32[3,5] expr=\"a-s\"",                     // rank 0
           "pointwise a=f32[1,1,5] b=f32[3,5] out=f32[2,3,5] expr=\"a/b\"",             // leading 1s, output larger
           "pointwise a=f32[4,1,6] b=f32[4,5,6] out=f32[4,5,6] expr=\"max(a,b)-min(a,b)\"",  // middle broadcast
           "pointwise a=f32[4,5,1] b=f32[1,5,6] out=f32[4,5,6] expr=\"a*b\"",           // both broadcast
           "pointwise a=f32[7] out=f32[3,1,7] expr=\"exp(a)\"",                          // output only expands
           "pointwise a=f32[0,5] b=f32[5] out=f32[0,5] expr=\"a+b\"",                   // empty
           "pointwise a=f32[5] b=f32[0,5] out=f32[0,5] expr=\"a+b\"",
           "pointwise a=f32[1] out=f32[1] expr=\"tanh(a)\"",                             // one element
           "pointwise a=f32[] b=f32[] out=f32[] expr=\"a*b\"",
           "pointwise a=f32[4,6]:[1,4] b=f32[6] out=f32[4,6] expr=\"relu(a+b)\"",       // strided (transposed)
           "pointwise a=f16[3,8]:[16,2] b=f32[3,1]:[5,1] out=bf16[3,8] expr=\"a*b-a\"",  // strided, gaps, mixed
       }) {
    OPSCHED_EXPECT_OK(CheckLine(line));
  }
}

TEST_P(PointwiseTest, EveryFunctionEveryDtype) {
  const char* unary[] = {"-a", "neg(a)", "abs(a)", "exp(a)", "log(p)", "sqrt(p)", "rsqrt(p)", "relu(a)",
                         "gelu(a)", "gelu_tanh(a)", "sigmoid(a)", "tanh(a)", "silu(a)", "f16(a)", "bf16(a)",
                         "f32(a)", "a+p", "a-p", "a*p", "a/p", "max(a,p)", "min(a,p)", "a*1e-3+0.5",
                         "0.5-a", "p-exp(a)", "2/p", "max(0.5,a)"};
  int runs = 0;
  for (const char* dtype : {"f32", "f16", "bf16"}) {
    for (const char* e : unary) {
      // p feeds log/sqrt/rsqrt/divisors: drawn positive; `+ 0*p` keeps p used.
      const std::string line = fmt::format(
          "pointwise a={0}[33,17] p={0}[17] out={0}[33,17] expr=\"out=({1}) + 0*a*p\"", dtype, e);
      OPSCHED_EXPECT_OK(CheckLine(line, false, &runs));
    }
  }
  // Mixed dtypes: f16 and bf16 inputs, an f32 and a bf16 output.
  OPSCHED_EXPECT_OK(CheckLine("pointwise a=f16[9,31] b=bf16[31] x=f32[9,31] y=bf16[9,31] "
                              "expr=\"x=gelu(a*b); y=sigmoid(x)-bf16(a)\"", false, &runs));
  EXPECT_GT(runs, 81 * 3);
}

TEST_P(PointwiseTest, ApproximateMathHoldsOverTheFullRange) {
  // On a CUDA device exp takes ex2.approx, division div.full.f32, and sigmoid and silu
  // ex2.approx.ftz and rcp.approx.ftz (pointwise_math.h). Arguments up to +-88 (scaled
  // exactly by a power of two), sigmoid and silu far beyond (+-400: the exponential
  // overflows to infinity, or is flushed from the subnormal range, and sigmoid of -87 to
  // -89 is itself subnormal) and divisors above 2^126, where a reciprocal-and-multiply
  // division returns 0, must stay within the float64 check's bounds.
  for (const char* e : {"exp(a*32)", "sigmoid(a*32)", "silu(a*32)", "sigmoid(a*128)", "silu(a*128)",
                        "exp(-abs(a*44))", "1/(1+exp(a*-32))",
                        "(a*1.5e38)/(p*1.7e38)", "(a*1e-30)/(p*1e8)", "rsqrt(p*1e-36)"}) {
    OPSCHED_EXPECT_OK(CheckLine(fmt::format("pointwise a=f32[64,33] p=f32[33] out=f32[64,33] expr=\"out=({}) + 0*a*p\"", e)));
  }
}

TEST_P(PointwiseTest, LongChainsAndTheKnownChains) {
  int runs = 0;
  // A 12-op chain over broadcast inputs.
  OPSCHED_EXPECT_OK(CheckLine("pointwise a=f32[64,257] b=f32[257] c=f32[64,1] out=f32[64,257] "
                              "expr=\"tanh(sigmoid(a*b+c)*exp(-abs(a)))/sqrt(c*c+1)+max(gelu(b),silu(a))-relu(c)\"",
                              false, &runs));
  const std::string lstm = "pointwise i={0}[50,128] f={0}[50,128] g={0}[50,128] o={0}[50,128] c={0}[50,128] "
                           "h={0}[50,128] c2={0}[50,128] expr=\"c2 = sigmoid(f)*c + sigmoid(i)*tanh(g); h = "
                           "sigmoid(o)*tanh(c2)\"";
  const std::string chains[] = {
      "pointwise a={0}[200,96] b={0}[96] out={0}[200,96] expr=\"relu(a+b)\"",
      "pointwise a={0}[200,96] b={0}[96] out={0}[200,96] expr=\"gelu(b+a)\"",
      "pointwise a={0}[200,96] b={0}[96] out={0}[200,96] expr=\"silu(a+b)\"",
      "pointwise a={0}[200,96] r={0}[200,96] out={0}[200,96] expr=\"a*0.125+r\"",
      "pointwise a={0}[200,96] r={0}[200,96] s={0}[1] out={0}[200,96] expr=\"r+s*a\"",
      "pointwise x={0}[300,7] out={0}[300,7] expr=\"gelu(x)\"",
      "pointwise x={0}[300,7] out={0}[300,7] expr=\"gelu_tanh(x)\"",
      "pointwise x={0}[300,8] out={0}[300,8] expr=\"silu(x)\"",
      "pointwise x={0}[300,8] out={0}[300,8] expr=\"relu(x)\"",
      lstm,
  };
  for (const std::string& pattern : chains) {
    for (const char* dtype : {"f32", "f16", "bf16"}) {
      const std::string line = fmt::format(fmt::runtime(pattern), dtype);
      EXPECT_TRUE(Applies(Specialised(), line)) << line;
      OPSCHED_EXPECT_OK(CheckLine(line, false, &runs));
    }
  }
  // Not the chains (or not periodic inputs): the specialised loop declines.
  EXPECT_FALSE(Applies(Specialised(), "pointwise a=f32[8,4] b=f32[8,1] o=f32[8,4] expr=\"relu(a+b)\""));
  EXPECT_FALSE(Applies(Specialised(), "pointwise a=f32[8,4] b=f32[4] o=f32[8,4] expr=\"relu(a-b)\""));
  EXPECT_FALSE(Applies(Specialised(), "pointwise a=f32[8,4] b=f16[4] o=f32[8,4] expr=\"relu(a+b)\""));
  EXPECT_FALSE(Applies(Specialised(), "pointwise a=f32[8,4]:[1,8] b=f32[4] o=f32[8,4] expr=\"relu(a+b)\""));
  EXPECT_GT(runs, 30 * 3);
}

// The GPU interpreter keeps a program's spill slots in shared memory while a block's fit
// in 48 KiB, else up to four in registers, else in local memory. With 16 lanes, a block
// of 128 and 4 spill slots takes 32 KiB (shared), of 256 64 KiB (registers); 6 slots at
// 128 take 48 KiB (shared), at 256 96 KiB (local memory). With 4 lanes every block size
// (a template parameter of the shared kernel: 128, 256, 512) keeps them shared. In both
// programs each input is needed twice, far apart, so that they still spill 4 and 6
// values with the larger operand computed first; both subtract a spilled value from the
// accumulator and the accumulator from a spilled value. Each against the reference.
TEST_P(PointwiseTest, InterpreterSpillSlotsInSharedMemoryRegistersOrLocalMemory) {
  const std::string four = "pointwise a=f32[96,160] b=f32[160] c=f32[96,160] d=f32[96,1] e=f32[96,160] "
                           "out=f32[96,160] expr=\"(exp(a)-exp(b)-exp(c)-exp(d))*(a-(b-c-exp(e)))\"";
  const std::string six = "pointwise a=f32[96,160] b=f32[160] c=f32[96,160] d=f32[96,1] e=f32[96,160] "
                          "out=f32[96,160] expr=\"(exp(a)-exp(b)-exp(c)-exp(d)-exp(e))*(a-(b-c-d-e))\"";
  for (const auto& [line, spills] : {std::pair{four, 4}, std::pair{six, 6}}) {
    StatusOr<std::shared_ptr<const pointwise::Compiled>> c = pointwise::CompiledFor(Canonical(line));
    ASSERT_TRUE(c.ok()) << c.status();
    ASSERT_EQ((*c)->accumulator.num_spills, spills) << line;
  }
  if (OnCpu()) GTEST_SKIP() << "where the GPU kernel keeps spill slots";
  const Implementation& impl = *registry_.FindImplementation("pointwise_cuda_interpreted");
  for (const std::string& line : {four, six}) {
    TrialOptions options;
    options.seed = rng_();
    auto trial = Trial::Create(registry_, Canonical(line), target_, options);
    ASSERT_TRUE(trial.ok()) << trial.status();
    for (int block : {128, 256, 512}) {
      for (int vector : {16, 4}) {
        if (block == 512 && vector == 16) continue;  // beyond the 16-lane kernel's launch bound
        const Config config = Config().Set("block", block).Set("vector", vector).Set("items", 2).Set("shared", 0);
        OPSCHED_EXPECT_OK(Annotate((*trial)->Run(impl, config), line + " " + config.ToString()));
        OPSCHED_EXPECT_OK(Annotate((*trial)->Check(impl), line + " " + config.ToString()));
      }
    }
  }
}

// The private-slot interpreter spreads a group's 16 lanes over its warp's span in chunks
// of 16 bytes of the widest tensor (SpreadChunk: 4 elements where a tensor is f32, else
// 8) where the innermost run holds whole warp spans of 512 elements; 8 lanes stay
// consecutive (host part only: no device needed).
TEST_P(PointwiseTest, InterpreterSpreadsLanesOverAWarpSpanWhereTheRunHoldsWholeSpans) {
  if (!OnCpu()) GTEST_SKIP() << "device independent: runs with the CPU parameter";
  auto chunk = [&](const std::string& line, int vector) {
    StatusOr<std::shared_ptr<const pointwise::Compiled>> c = pointwise::CompiledFor(Canonical(line));
    EXPECT_TRUE(c.ok()) << line << ": " << c.status();
    return c.ok() ? pointwise::SpreadChunk((*c)->bytecode, vector) : -1;
  };
  const std::string chain = "pointwise x=f32[64,1024,1024] out=f32[64,1024,1024] expr=\"tanh(x)*0.5\"";
  EXPECT_EQ(chunk(chain, 16), 4);  // one run of 64M: spans of 512
  EXPECT_EQ(chunk(chain, 8), 0);
  EXPECT_EQ(chunk(chain, 4), 0);
  EXPECT_EQ(chunk("pointwise a=f32[8192,3072] b=f32[3072] out=f32[8192,3072] expr=\"gelu(a+b)\"", 16), 4);
  EXPECT_EQ(chunk("pointwise a=f32[96,800] b=f32[800] out=f32[96,800] expr=\"a+b\"", 16), 0);  // 800 % 512
  EXPECT_EQ(chunk("pointwise a=f32[8,50257] b=f32[50257] out=f32[8,50257] expr=\"a*b\"", 16), 0);
  const std::string narrow = "pointwise a=bf16[8192,4096] b=bf16[4096] out=bf16[8192,4096] expr=\"silu(a+b)\"";
  EXPECT_EQ(chunk(narrow, 16), 8);  // 16 bytes of bf16
  EXPECT_EQ(chunk(narrow, 8), 0);
  EXPECT_EQ(chunk("pointwise a=bf16[8192,4096] b=f32[4096] out=bf16[8192,4096] expr=\"silu(a+b)\"", 16), 4);
  EXPECT_EQ(chunk("pointwise a=f32[] out=f32[] expr=\"-a\"", 16), 0);
}

// Spread lanes (SpreadChunk) against the reference, at 16 lanes (and 8, consecutive):
// contiguous and broadcast inputs, a transposed input and rows whose pitch misaligns them
// (single loads), 16-bit tensors in chunks of 8 and beside f32 in chunks of 4, two
// outputs, in place.
TEST_P(PointwiseTest, InterpreterSpreadLanesMatchTheReference) {
  if (OnCpu()) GTEST_SKIP() << "the GPU interpreter's lane layout";
  const Implementation& impl = *registry_.FindImplementation("pointwise_cuda_interpreted");
  struct Case {
    std::string line;
    int chunk;      // SpreadChunk at 16 lanes
    bool in_place;  // the first output shaped like the first input (by name)
  };
  const Case cases[] = {
      {"pointwise a=f32[6,512] b=f32[512] c=f32[6,1] out=f32[6,512] expr=\"tanh(a*b+c)-a\"", 4, true},
      {"pointwise a=f32[6,512]:[1,6] b=f32[512] out=f32[6,512] expr=\"relu(a+b)*0.5\"", 4, false},
      {"pointwise a=f32[3,1024]:[1031,1] b=f32[1024] out=f32[3,1024] expr=\"exp(-abs(a))*b\"", 4, false},
      {"pointwise a=bf16[4,1024] b=bf16[1024] out=bf16[4,1024] expr=\"silu(a+b)\"", 8, true},
      {"pointwise a=f16[2,2048] b=f16[2,2048] x=f16[2,2048] y=f16[2,2048] expr=\"x=a*b; y=sigmoid(a)-b\"", 8, true},
      {"pointwise a=f16[4,512] b=f32[512] x=f32[4,512] y=bf16[4,512] expr=\"x=gelu(a*b); y=sigmoid(x)-a\"", 4, false},
      {"pointwise a=bf16[3,512]:[520,1] out=bf16[3,512] expr=\"tanh(a)\"", 8, false},
  };
  int runs = 0;
  for (const Case& c : cases) {
    StatusOr<std::shared_ptr<const pointwise::Compiled>> compiled = pointwise::CompiledFor(Canonical(c.line));
    ASSERT_TRUE(compiled.ok()) << compiled.status();
    EXPECT_EQ(pointwise::SpreadChunk((*compiled)->bytecode, 16), c.chunk) << c.line;
    std::vector<Config> configs;
    for (const int vector : {8, 16}) {
      for (const int block : {128, 256}) {
        for (const int items : {1, 2}) {
          configs.push_back(Config().Set("block", block).Set("vector", vector).Set("items", items).Set("shared", 0));
        }
      }
    }
    OPSCHED_EXPECT_OK(CheckConfigsOf(c.line, impl, configs, c.in_place, &runs));
  }
  EXPECT_EQ(runs, (7 + 3) * 8);
}

// With `items` 2 and 4 every thread takes several grid steps: sizes whose group count is
// no multiple of the grid's threads (the last step partial, some threads with one step
// fewer), dense and broadcast inputs, f32 and 16-bit, in place, through the accumulator
// interpreter, its shared-slot form and the specialised chains, against the reference.
TEST_P(PointwiseTest, SeveralGridStepsAThreadReachTheLastPartialStep) {
  if (OnCpu()) GTEST_SKIP() << "the GPU kernels' grid steps";
  struct Case {
    std::string line;
    std::string impl;
    bool in_place;
  };
  const Case cases[] = {
      {"pointwise a=f32[1000,96] b=f32[96] out=f32[1000,96] expr=\"relu(a+b)*0.5-exp(-a)\"", "pointwise_cuda_interpreted",
       true},
      {"pointwise a=f16[777,64] b=f16[777,64] out=f16[777,64] expr=\"a*sigmoid(1.702*b)\"", "pointwise_cuda_interpreted",
       false},
      {"pointwise a=f32[3001,40] b=f32[40] out=f32[3001,40] expr=\"gelu(a+b)\"", "pointwise_cuda_specialised", true},
      {"pointwise x=bf16[50008] out=bf16[50008] expr=\"silu(x)\"", "pointwise_cuda_specialised", false},
  };
  int runs = 0;
  for (const Case& c : cases) {
    const Implementation& impl = *registry_.FindImplementation(c.impl);
    const bool interpreted = c.impl == "pointwise_cuda_interpreted";
    std::vector<Config> configs;
    for (const int items : {2, 4}) {
      for (const int block : {128, 256}) {
        for (const int vector : {1, 4, 8}) {
          Config config = Config().Set("block", block).Set("vector", interpreted && vector == 8 ? 16 : vector);
          config.Set("items", items);
          if (interpreted) config.Set("shared", 0);
          configs.push_back(config);
        }
        if (interpreted) {
          configs.push_back(Config().Set("block", block).Set("vector", 4).Set("items", items).Set("shared", 1));
        }
      }
    }
    OPSCHED_EXPECT_OK(CheckConfigsOf(c.line, impl, configs, c.in_place, &runs));
  }
  EXPECT_EQ(runs, 2 * 16 + 16 + 2 * 12 + 12);
}

// The GPU interpreter's superinstructions (kNegAbs; kMulAdd of an immediate, in the word
// after it, and of a spill, with the multiplier negated for c - x * m) beside folded
// spills and fetches, at 1 to 16 lanes (the uniform loop at 8 and 16), spread and
// consecutive, f16, bf16 and f32 beside each other, against the reference. The last
// program needs 4 spill slots: at 16 lanes a block of 256 keeps them in registers (64
// KiB), one of 128 in shared memory.
TEST_P(PointwiseTest, InterpreterSuperinstructionsMatchTheReference) {
  if (OnCpu()) GTEST_SKIP() << "the GPU interpreter's dispatch";
  const Implementation& impl = *registry_.FindImplementation("pointwise_cuda_interpreted");
  struct Case {
    std::string line;
    pointwise::OpCode fused;
    bool immediate;  // kMulAdd's operand
  };
  const Case cases[] = {
      {"pointwise a=f32[6,512] b=f32[512] out=f32[6,512] expr=\"exp(-abs(a))*b+relu(a)*0.5\"",
       pointwise::OpCode::kNegAbs, false},
      {"pointwise a=f32[9,96] out=f32[9,96] expr=\"tanh(sigmoid(a)*2-1)\"", pointwise::OpCode::kMulAdd, true},
      {"pointwise a=f16[4,1024] out=f16[4,1024] expr=\"0.75-a*3\"", pointwise::OpCode::kMulAdd, true},
      {"pointwise a=f32[7,96] b=f32[96] out=f32[7,96] expr=\"a*0.125+b*0.5\"", pointwise::OpCode::kMulAdd, false},
      {"pointwise a=bf16[3,1024] b=f32[1024] out=f32[3,1024] expr=\"exp(b)-a*0.125\"", pointwise::OpCode::kMulAdd,
       false},
      {"pointwise a=f32[96,160] b=f32[160] c=f32[96,160] d=f32[96,1] e=f32[96,160] out=f32[96,160] "
       "expr=\"a-(b-(c-(d-exp(e)*0.5)))\"",
       pointwise::OpCode::kMulAdd, false},
  };
  int runs = 0;
  for (const Case& c : cases) {
    StatusOr<std::shared_ptr<const pointwise::Compiled>> compiled = pointwise::CompiledFor(Canonical(c.line));
    ASSERT_TRUE(compiled.ok()) << compiled.status();
    const pointwise::AccCode& code = (*compiled)->accumulator;
    bool found = false;
    for (int k = 0; k < code.num_instructions; ++k) {
      const bool immediate = code.code[k].mode & pointwise::kOperandImmediate;
      found |= code.code[k].op == c.fused && (c.fused != pointwise::OpCode::kMulAdd || immediate == c.immediate);
    }
    EXPECT_TRUE(found) << c.line << "\n" << pointwise::Disassemble(code, (*compiled)->program);
    TrialOptions options;
    options.seed = rng_();
    auto trial = Trial::Create(registry_, Canonical(c.line), target_, options);
    ASSERT_TRUE(trial.ok()) << trial.status();
    std::vector<Config> configs;
    for (const int vector : {1, 4, 8, 16}) {
      for (const int block : {128, 256}) {
        configs.push_back(Config().Set("block", block).Set("vector", vector).Set("items", 1).Set("shared", 0));
      }
    }
    OPSCHED_EXPECT_OK(Annotate(testing::CheckConfigs(**trial, impl, configs, false, &runs), c.line));
  }
  EXPECT_EQ(runs, 6 * 8);
}

// The GPU interpreter indexes in 32-bit arithmetic only where the element count and
// every tensor's offsets fit 31 bits; otherwise it runs its 64-bit kernel.
TEST_P(PointwiseTest, ThirtyTwoBitOffsetsOnlyWhereEveryOffsetFits) {
  if (!OnCpu()) GTEST_SKIP() << "device independent: runs with the CPU parameter";
  auto fits = [&](const std::string& line) {
    StatusOr<std::shared_ptr<const pointwise::Compiled>> c = pointwise::CompiledFor(Canonical(line));
    EXPECT_TRUE(c.ok()) << line << ": " << c.status();
    return c.ok() && pointwise::OffsetsFit32((*c)->bytecode);
  };
  EXPECT_TRUE(fits("pointwise a=f32[64,1024] b=f32[1024] out=f32[64,1024] expr=\"a+b\""));
  EXPECT_TRUE(fits("pointwise a=f32[2,3]:[1073741824,1] out=f32[2,3] expr=\"a\""));   // largest 2^30 + 2
  EXPECT_FALSE(fits("pointwise a=f32[3,3]:[1073741824,1] out=f32[3,3] expr=\"a\""));  // 2^31 + 2
  EXPECT_FALSE(fits("pointwise a=f32[2,3]:[1099511627776,1] out=f32[2,3] expr=\"a\""));  // 2^40 + 2
  EXPECT_FALSE(fits("pointwise a=f16[65536,32768] out=f16[65536,32768] expr=\"-a\""));  // 2^31 elements
}

// The interpreter's rule for a program no record covers (DefaultConfig): blocks of 128
// and the widest vector that the innermost run allows while 32768 threads remain, up to
// 16 lanes where every tensor is 16-bit, else 8 (host part only: no device needed).
TEST_P(PointwiseTest, InterpreterRuleTakesThirtyTwoBytesAThreadWhereTheRunAndTheSizeAllow) {
  if (!OnCpu()) GTEST_SKIP() << "device independent: runs with the CPU parameter";
  const Implementation* impl = registry_.FindImplementation("pointwise_cuda_interpreted");
  if (impl == nullptr) GTEST_SKIP() << "this build registers no GPU implementation";
  auto rule = [&](const std::string& line) { return RuleOnH100(*impl, line); };
  EXPECT_EQ(rule("pointwise a=bf16[2048,11008] b=bf16[2048,11008] out=bf16[2048,11008] expr=\"silu(a)*b\""),
            "block=128,items=1,shared=0,vector=16");
  // An f32 tensor among them: 8 lanes.
  EXPECT_EQ(rule("pointwise a=bf16[2048,11008] b=f32[2048,11008] out=bf16[2048,11008] expr=\"silu(a)*b\""),
            "block=128,items=1,shared=0,vector=8");
  // A contiguous [8, 50257] merges into one run of 402056: eight lanes.
  EXPECT_EQ(rule("pointwise x=f32[8,50257] out=f32[8,50257] expr=\"30*tanh(x/30)\""),
            "block=128,items=1,shared=0,vector=8");
  // With a broadcast row the run is 50257, odd: one lane.
  EXPECT_EQ(rule("pointwise x=f32[8,50257] b=f32[50257] out=f32[8,50257] expr=\"30*tanh(x/b)\""),
            "block=128,items=1,shared=0,vector=1");
  // 65536 elements: two lanes keep 32768 threads.
  EXPECT_EQ(rule("pointwise a=f32[64,1024] b=f32[1024] out=f32[64,1024] expr=\"relu(a+b)*0.5\""),
            "block=128,items=1,shared=0,vector=2");
  // A run of 12: four lanes divide it, eight do not.
  EXPECT_EQ(rule("pointwise a=f32[65536,12] b=f32[12] out=f32[65536,12] expr=\"exp(a)*b\""),
            "block=128,items=1,shared=0,vector=4");
}

// The specialised chains' rule (DefaultConfig): blocks of 256 and 16 bytes of every
// tensor a thread (8 lanes of f16/bf16, 4 of f32) while 32768 threads remain, else 1.
TEST_P(PointwiseTest, SpecialisedRuleTakesSixteenBytesAThreadWhereTheRunAndTheSizeAllow) {
  if (!OnCpu()) GTEST_SKIP() << "device independent: runs with the CPU parameter";
  const Implementation* impl = registry_.FindImplementation("pointwise_cuda_specialised");
  if (impl == nullptr) GTEST_SKIP() << "this build registers no GPU implementation";
  auto rule = [&](const std::string& line) { return RuleOnH100(*impl, line); };
  EXPECT_EQ(rule("pointwise a=bf16[8192,4096] b=bf16[4096] out=bf16[8192,4096] expr=\"silu(a+b)\""),
            "block=256,items=1,vector=8");
  EXPECT_EQ(rule("pointwise x=f16[4096,4096] out=f16[4096,4096] expr=\"silu(x)\""), "block=256,items=1,vector=8");
  EXPECT_EQ(rule("pointwise a=f32[8192,3072] b=f32[3072] out=f32[8192,3072] expr=\"gelu(a+b)\""),
            "block=256,items=1,vector=4");
  // A bias of 12 f16: 4 lanes divide it, 8 do not.
  EXPECT_EQ(rule("pointwise a=f16[65536,12] b=f16[12] out=f16[65536,12] expr=\"relu(a+b)\""),
            "block=256,items=1,vector=4");
  // LSTM cells of char-rnn size: 6400 and 65536 elements, one lane.
  const std::string lstm = " expr=\"c2=sigmoid(f)*c+sigmoid(i)*tanh(g); h=sigmoid(o)*tanh(c2)\"";
  EXPECT_EQ(rule("pointwise c=f32[50,128] f=f32[50,128] g=f32[50,128] i=f32[50,128] o=f32[50,128] c2=f32[50,128] "
                 "h=f32[50,128]" + lstm),
            "block=256,items=1,vector=1");
  EXPECT_EQ(rule("pointwise c=f16[128,512] f=f16[128,512] g=f16[128,512] i=f16[128,512] o=f16[128,512] "
                 "c2=f16[128,512] h=f16[128,512]" + lstm),
            "block=256,items=1,vector=1");
  // 131072 f32 elements: 4 lanes keep 32768 threads.
  EXPECT_EQ(rule("pointwise c=f32[128,1024] f=f32[128,1024] g=f32[128,1024] i=f32[128,1024] o=f32[128,1024] "
                 "c2=f32[128,1024] h=f32[128,1024]" + lstm),
            "block=256,items=1,vector=4");
}

TEST_P(PointwiseTest, InPlaceOutputAliasesTheFirstInput) {
  // The first input by name is shaped like the first output by name.
  OPSCHED_EXPECT_OK(CheckLine("pointwise a=f32[40,33] b=f32[33] a2=f32[40,33] expr=\"a2=relu(a+b)*a\"", true));
  OPSCHED_EXPECT_OK(CheckLine("pointwise c=bf16[50,64] f=bf16[50,64] g=bf16[50,64] i=bf16[50,64] o=bf16[50,64] "
                              "c2=bf16[50,64] h=bf16[50,64] expr=\"c2=sigmoid(f)*c+sigmoid(i)*tanh(g); "
                              "h=sigmoid(o)*tanh(c2)\"",
                              true));
  OPSCHED_EXPECT_OK(CheckLine("pointwise a=f16[17] a2=f16[17] b=f16[17] c=f16[17] expr=\"a2=a*b; t=a; c=t-b\"", true));
}

TEST_P(PointwiseTest, TheCheckCatchesAWrongResult) {
  if (!OnCpu()) GTEST_SKIP() << "device independent: runs with the CPU parameter";
  // The tolerance is tight enough that an error of one f32 ulp per element in a long
  // chain passes but a wrong function does not: run the right program, check against a
  // slightly different one.
  const Workload right = Canonical("pointwise a=f32[64] o=f32[64] expr=\"gelu(a)\"");
  const Workload wrong = Canonical("pointwise a=f32[64] o=f32[64] expr=\"gelu_tanh(a)\"");
  TrialOptions options;
  options.seed = 7;
  auto trial = Trial::Create(registry_, right, target_, options);
  ASSERT_TRUE(trial.ok()) << trial.status();
  const Implementation& impl = *registry_.FindImplementation("pointwise_cpu_interpreted");
  OPSCHED_ASSERT_OK((*trial)->Run(impl, Config().Set("threads", 1).Set("chunk", 4096)));
  OPSCHED_EXPECT_OK((*trial)->Check(impl));
  const OpDef& op = *registry_.FindOp("pointwise");
  auto ref = op.Reference(wrong, (*trial)->inputs());
  ASSERT_TRUE(ref.ok());
  EXPECT_FALSE(op.Check(wrong, (*trial)->inputs(), (*trial)->outputs(), *ref, true, nullptr).ok());
}

// The f16/bf16 chain kernels read and write 16 bytes at a time with no test of the
// address only where every tensor they so access is aligned for it (checked at launch),
// and the f32 ones test each address; tensors one element off an aligned address take
// the single-element path either way. Each program runs through the Runtime (which
// serves it by the specialised chain, 16 bytes a thread by its rule) on copies of the
// trial's tensors placed one element past an aligned address, against the reference.
TEST_P(PointwiseTest, SpecialisedChainsServeMisalignedTensors) {
  if (OnCpu()) GTEST_SKIP() << "the GPU chain kernels' packed accesses";
  RuntimeOptions o;
  o.target = target_;
  o.device_errors = DeviceErrors::kSynchronous;
  auto rt = Runtime::Create(o);
  ASSERT_TRUE(rt.ok()) << rt.status();
  Runtime& runtime = **rt;
  struct Case {
    std::string line, program;
    std::vector<std::string> inputs, outputs;  // canonical (name) order
  };
  const Case cases[] = {
      {"pointwise b=f32[1024] x=f32[64,1024] y=f32[64,1024] expr=\"y=gelu(x+b)\"", "y=gelu(x+b)", {"b", "x"}, {"y"}},
      {"pointwise b=bf16[512] x=bf16[32,512] y=bf16[32,512] expr=\"y=silu(x+b)\"", "y=silu(x+b)", {"b", "x"}, {"y"}},
      {"pointwise c=f16[16,256] f=f16[16,256] g=f16[16,256] i=f16[16,256] o=f16[16,256] c2=f16[16,256] "
       "h=f16[16,256] expr=\"c2=sigmoid(f)*c+sigmoid(i)*tanh(g); h=sigmoid(o)*tanh(c2)\"",
       "c2=sigmoid(f)*c+sigmoid(i)*tanh(g); h=sigmoid(o)*tanh(c2)", {"c", "f", "g", "i", "o"}, {"c2", "h"}},
  };
  for (const Case& c : cases) {
    const Workload w = Canonical(c.line);
    auto d = runtime.Decide(w);
    ASSERT_TRUE(d.ok()) << d.status();
    ASSERT_EQ(d->implementation->name(), Specialised()) << c.line;
    OPSCHED_ASSERT_OK(Annotate(
        CheckRuntimeCall(registry_, target_, w,
                         [&](const std::vector<Tensor>& t, const Stream& s) -> Status {
                           // Each tensor's copy one element past a 256-byte aligned block.
                           std::vector<void*> blocks;
                           std::vector<Tensor> shifted = t;
                           Status status = absl::OkStatus();
                           for (Tensor& x : shifted) {
                             const size_t bytes = x.desc.storage_bytes();
                             StatusOr<void*> block = gpu::Malloc(x.device, bytes + 256);
                             if (!block.ok()) {
                               status = block.status();
                               break;
                             }
                             blocks.push_back(*block);
                             void* at = static_cast<char*>(*block) + DTypeSize(x.desc.dtype());
                             if (status.ok()) status = gpu::MemcpyAsync(at, x.data, bytes, s.native());
                             x.data = at;
                           }
                           std::vector<NamedTensor> in, out;
                           for (size_t k = 0; k < c.inputs.size(); ++k) in.push_back({c.inputs[k], shifted[k]});
                           for (size_t k = 0; k < c.outputs.size(); ++k) {
                             out.push_back({c.outputs[k], shifted[c.inputs.size() + k]});
                           }
                           if (status.ok()) status = runtime.Pointwise(c.program, in, out, s);
                           for (size_t k = c.inputs.size(); k < t.size() && status.ok(); ++k) {
                             status = gpu::MemcpyAsync(t[k].data, shifted[k].data, t[k].desc.storage_bytes(), s.native());
                           }
                           if (status.ok()) status = gpu::StreamSynchronize(s.native());
                           for (void* b : blocks) {
                             const Status freed = gpu::Free(t[0].device, b);
                             if (status.ok()) status = freed;
                           }
                           return status;
                         }),
        c.line));
  }
}

TEST_P(PointwiseTest, RuntimeEntryRunsNamedTensors) {
  RuntimeOptions o;
  o.target = target_;
  o.device_errors = DeviceErrors::kSynchronous;
  auto rt = Runtime::Create(o);
  ASSERT_TRUE(rt.ok()) << rt.status();
  Runtime& runtime = **rt;
  using Tensors = std::vector<Tensor>;
  const std::string program = "relu(bias + x) * 0.5";
  for (int call = 0; call < 2; ++call) {  // the second call is served from the cache
    OPSCHED_ASSERT_OK(CheckRuntimeCall(
        registry_, target_, Canonical("pointwise x=f32[64,1024] bias=f32[1024] out=f32[64,1024] expr=\"" + program + "\""),
        [&](const Tensors& t, const Stream& s) {
          // Canonical order: bias, x, then out; given here in another order.
          const NamedTensor in[] = {{"x", t[1]}, {"bias", t[0]}};
          const NamedTensor out[] = {{"out", t[2]}};
          return runtime.Pointwise(program, in, out, s);
        }));
  }
  const std::string lstm = "c2=sigmoid(f)*c+sigmoid(i)*tanh(g); h=sigmoid(o)*tanh(c2)";
  OPSCHED_ASSERT_OK(CheckRuntimeCall(
      registry_, target_,
      Canonical("pointwise c=f32[64,256] f=f32[64,256] g=f32[64,256] i=f32[64,256] o=f32[64,256] c2=f32[64,256] "
                "h=f32[64,256] expr=\"" + lstm + "\""),
      [&](const Tensors& t, const Stream& s) {
        const NamedTensor in[] = {{"i", t[3]}, {"f", t[1]}, {"g", t[2]}, {"o", t[4]}, {"c", t[0]}};
        const NamedTensor out[] = {{"h", t[6]}, {"c2", t[5]}};
        return runtime.Pointwise(lstm, in, out, s);
      }));
  auto d = runtime.Decide(Canonical("pointwise c=f32[64,256] f=f32[64,256] g=f32[64,256] i=f32[64,256] "
                                    "o=f32[64,256] c2=f32[64,256] h=f32[64,256] expr=\"" + lstm + "\""));
  ASSERT_TRUE(d.ok()) << d.status();
  EXPECT_EQ(d->implementation->name(), Specialised());
  if (!OnCpu()) return;
  // Errors: a bad program, a wrong shape.
  HostTensor a(TensorDesc::Contiguous(DType::kF32, {4})), out(TensorDesc::Contiguous(DType::kF32, {5}));
  auto stream = Stream::Create(Device::Cpu());
  ASSERT_TRUE(stream.ok());
  const NamedTensor in[] = {{"a", a.tensor()}};
  const NamedTensor bad_out[] = {{"out", out.tensor()}};
  EXPECT_EQ(runtime.Pointwise("relu(a", in, bad_out, *stream).message(), "expr column 7: expected ',' or ')'");
  EXPECT_EQ(runtime.Pointwise("relu(a)", in, bad_out, *stream).message(),
            "pointwise: expr column 6: broadcasting shape mismatch: input 'a' [4] does not broadcast to the "
            "outputs' shape [5]");
}

INSTANTIATE_TEST_SUITE_P(Devices, PointwiseTest, ::testing::Values(DeviceKind::kCpu, DeviceKind::kCuda),
                         [](const auto& info) { return std::string(DeviceKindName(info.param)); });

}  // namespace
}  // namespace opsched
