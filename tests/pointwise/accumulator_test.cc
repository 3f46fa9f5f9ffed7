// The accumulator form (ops/pointwise/pointwise_accumulate.h): its listing for a known
// program, and on random programs (shared subexpressions, several outputs, constants on
// either side of non-commutative operations, x op x, broadcast inputs) the same results
// as the bytecode bit for bit, with no spill that is never read back.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <fstream>
#include <random>
#include <vector>

#include "core/format.h"
#include "ops/pointwise/pointwise_accumulate.h"
#include "ops/pointwise/pointwise_compile.h"
#include "ops/pointwise/pointwise_def.h"
#include "ops/pointwise/pointwise_interpret.h"
#include "registry/registry.h"

namespace opsched::pointwise {
namespace {

std::shared_ptr<const Compiled> CompiledLine(const std::string& line) {
  StatusOr<Workload> w = Registry::Global().ParseCanonical(line);
  EXPECT_TRUE(w.ok()) << line << ": " << w.status();
  if (!w.ok()) return nullptr;
  StatusOr<std::shared_ptr<const Compiled>> c = CompiledFor(*w);
  EXPECT_TRUE(c.ok()) << line << ": " << c.status();
  return c.ok() ? *c : nullptr;
}

TEST(AccumulatorTest, ListingKeepsTheValueInTheAccumulatorAndFoldsConstants) {
  auto c = CompiledLine("pointwise a=f32[64,1024] b=f32[1024] out=f32[64,1024] expr=\"relu(a+b)*0.5\"");
  ASSERT_NE(c, nullptr);
  // a is needed after b is loaded: one spill, folded into the load; 0.5 becomes an
  // immediate operand.
  EXPECT_EQ(Disassemble(c->accumulator, c->program),
            "acc = load a\n"
            "spill0 = acc; acc = load b\n"
            "acc = spill0 + acc\n"
            "acc = relu(acc)\n"
            "acc = 0.5 * acc\n"
            "store out = acc\n")
      << Disassemble(c->bytecode, c->program);
  EXPECT_EQ(c->accumulator.num_spills, 1);
}

TEST(AccumulatorTest, ALinearChainNeedsNoSpill) {
  auto c = CompiledLine("pointwise x=f32[1000] out=f32[1000] expr=\"exp(tanh(sigmoid(x)*2-1)) / 3\"");
  ASSERT_NE(c, nullptr);
  EXPECT_EQ(c->accumulator.num_spills, 0) << Disassemble(c->accumulator, c->program);
  for (int k = 0; k < c->accumulator.num_instructions; ++k) {
    EXPECT_NE(c->accumulator.code[k].op, OpCode::kFetch);
    EXPECT_NE(c->accumulator.code[k].op, OpCode::kConst);
  }
}

// A random expression over the inputs a, b, c and the names in `names`.
std::string RandomExpr(std::mt19937_64& rng, int depth, const std::vector<std::string>& names) {
  static const char* kUnary[] = {"neg", "abs", "exp", "log", "sqrt", "rsqrt", "relu", "gelu",
                                 "gelu_tanh", "sigmoid", "tanh", "silu", "f16", "bf16"};
  static const char* kBinary[] = {"+", "-", "*", "/"};
  static const char* kCall2[] = {"max", "min"};
  std::uniform_int_distribution<int> pick(0, 99);
  const int r = pick(rng);
  if (depth == 0 || r < 20) {
    if (r % 5 == 0) return fmt::format("{}", (r % 7) * 0.25 + 0.5);
    return names[rng() % names.size()];
  }
  if (r < 45) return fmt::format("{}({})", kUnary[rng() % 14], RandomExpr(rng, depth - 1, names));
  if (r < 55) {
    const std::string x = RandomExpr(rng, depth - 1, names);
    return fmt::format("({}*{})", x, x);  // x op x: one value as both operands
  }
  if (r < 90) {
    return fmt::format("({} {} {})", RandomExpr(rng, depth - 1, names), kBinary[rng() % 4],
                       RandomExpr(rng, depth - 1, names));
  }
  return fmt::format("{}({}, {})", kCall2[rng() % 2], RandomExpr(rng, depth - 1, names),
                     RandomExpr(rng, depth - 1, names));
}

// `specials`: the first elements of each input are the values where a wrong sign or order
// shows, for programs whose outputs keep them apart (no 0 * input term spreading a NaN).
void ExpectBitIdentical(const Compiled& c, std::mt19937_64& rng, bool specials = false) {
  const Bytecode& bc = c.bytecode;
  std::vector<std::vector<float>> in(bc.num_inputs);
  std::uniform_real_distribution<float> value(-3.0f, 3.0f);
  TensorPointers p;
  const float inf = std::numeric_limits<float>::infinity();
  const float special[] = {0.0f, -0.0f, inf, -inf, std::nanf(""), 1e-45f, -3.4e38f, 1.0f + 0x1p-23f};
  for (int t = 0; t < bc.num_inputs; ++t) {
    in[t].resize(static_cast<size_t>(c.inputs[t].numel()) + 1);
    for (float& v : in[t]) v = value(rng);
    for (size_t i = 0; specials && i < in[t].size() && i < 8; ++i) in[t][i] = special[(i + t) % 8];
    p.data[t] = in[t].data();
  }
  const int64_t n = bc.numel;
  std::vector<std::vector<float>> by_bytecode(bc.num_outputs, std::vector<float>(n));
  std::vector<std::vector<float>> by_accumulator(bc.num_outputs, std::vector<float>(n));
  for (int pass = 0; pass < 2; ++pass) {
    auto& out = pass == 0 ? by_bytecode : by_accumulator;
    for (int o = 0; o < bc.num_outputs; ++o) p.data[bc.num_inputs + o] = out[o].data();
    int64_t offsets[kMaxTensors];
    for (int64_t i = 0; i < n; ++i) {
      Offsets(bc, i, offsets);
      if (pass == 0) {
        RunElement(bc, p, offsets);
      } else {
        RunAccumulated(bc, c.accumulator, p, offsets);
      }
    }
  }
  // Bit for bit, except that a NaN's sign and payload are not specified (a compiler may
  // swap the operands of a commutative operation, and x86 returns the first NaN).
  auto same = [](float x, float y) { return std::memcmp(&x, &y, sizeof(float)) == 0 || (x != x && y != y); };
  for (int o = 0; o < bc.num_outputs; ++o) {
    int64_t differ = 0;
    for (int64_t i = 0; i < n; ++i) differ += !same(by_bytecode[o][i], by_accumulator[o][i]);
    ASSERT_EQ(differ, 0) << "output " << o << "\nbytecode:\n"
        << Disassemble(bc, c.program) << "accumulator:\n"
        << Disassemble(c.accumulator, c.program);
  }
}

// Every spill is read back (a fetch or an operand) before its slot is spilled again, in
// the order an instruction runs: its folded spill, its folded fetch, then the operation.
void ExpectNoDeadSpill(const Compiled& c) {
  const AccCode& code = c.accumulator;
  std::vector<bool> unread(kMaxSlots, false);
  auto spilled = [&](int slot, int k) {
    EXPECT_FALSE(unread[slot]) << "spill" << slot << " overwritten unread at " << k << "\n"
                               << Disassemble(code, c.program);
    unread[slot] = true;
  };
  for (int k = 0; k < code.num_instructions; ++k) {
    const AccInstruction& in = code.code[k];
    if (in.spill_first) spilled(in.spill_first - 1, k);
    if (in.fetch_first) unread[in.fetch_first - 1] = false;
    const bool operand = IsBinary(in.op) || in.op == OpCode::kMulAdd;
    const bool reads = in.op == OpCode::kFetch || (operand && !(in.mode & kOperandImmediate));
    if (reads) unread[in.slot] = false;
    if (in.op == OpCode::kSpill) spilled(in.slot, k);
  }
  for (int s = 0; s < kMaxSlots; ++s) EXPECT_FALSE(unread[s]) << "spill" << s << " never read";
}

// Spills and fetches are folded into the instruction after them; counts how many of each,
// and the superinstructions of each kind (kNegAbs, kMulAdd of an immediate, of a spill).
struct Counts {
  int spills = 0, fetches = 0, neg_abs = 0, mul_add_immediate = 0, mul_add_spill = 0;
};
void Count(const AccCode& code, Counts* n) {
  for (int k = 0; k < code.num_instructions; ++k) {
    const AccInstruction& in = code.code[k];
    n->spills += in.spill_first != 0;
    n->fetches += in.fetch_first != 0;
    n->neg_abs += in.op == OpCode::kNegAbs;
    if (in.op == OpCode::kMulAdd) {
      const bool immediate = in.mode & kOperandImmediate;
      (immediate ? n->mul_add_immediate : n->mul_add_spill) += 1;
      if (immediate) {
        EXPECT_LT(k + 1, code.num_instructions);
        if (k + 1 < code.num_instructions) {
          EXPECT_EQ(code.code[k + 1].op, OpCode::kOperandWord);
        }
      }
    }
  }
}

TEST(AccumulatorTest, RandomProgramsMatchTheBytecodeBitForBit) {
  std::mt19937_64 rng(20261123);
  int checked = 0;
  Counts n;
  for (int trial = 0; trial < 300; ++trial) {
    const int outputs = 1 + static_cast<int>(rng() % 3);
    std::vector<std::string> names = {"a", "b", "c"};
    std::string expr;
    if (rng() % 2) {  // a temporary shared by the outputs
      expr = "t=" + RandomExpr(rng, 3, names) + "; ";
      names.push_back("t");
    }
    for (int o = 0; o < outputs; ++o) {
      expr += fmt::format("o{}={}", o, RandomExpr(rng, 5, names));
      expr += "+0*a*b*c";  // every input used
      if (o + 1 < outputs) expr += "; ";
      names.push_back(fmt::format("o{}", o));  // an earlier output feeds later ones
    }
    std::string line = "pointwise a=f32[5,7] b=f32[7] c=f32[5,1]";
    for (int o = 0; o < outputs; ++o) line += fmt::format(" o{}=f32[5,7]", o);
    line += " expr=\"" + expr + "\"";
    StatusOr<Workload> w = Registry::Global().ParseCanonical(line);
    if (!w.ok()) continue;  // e.g. an unused temporary
    StatusOr<std::shared_ptr<const Compiled>> c = CompiledFor(*w);
    if (!c.ok()) continue;  // beyond the bytecode's limits
    SCOPED_TRACE(line);
    ExpectBitIdentical(**c, rng);
    ExpectNoDeadSpill(**c);
    Count((*c)->accumulator, &n);
    ++checked;
  }
  EXPECT_GT(checked, 200);
  // The folded forms and the superinstructions ran: RunAccumulated matched the bytecode
  // through them.
  EXPECT_GT(n.spills, 100);
  EXPECT_GT(n.fetches, 100);
  EXPECT_GT(n.neg_abs + n.mul_add_immediate + n.mul_add_spill, 10);
}

// Each pair that a superinstruction replaces, with the immediate or the spilled operand
// on either side and subtraction both ways (x - c is x + -c; c - x * m is c + x * -m),
// matches the bytecode bit for bit; over random inputs and the values where a wrong sign
// shows (zeros of both signs, infinities, NaN, products that round).
TEST(AccumulatorTest, SuperinstructionsMatchThePairsTheyReplace) {
  struct Case {
    const char* expr;
    const char* listing;  // the superinstruction's line
  };
  const Case cases[] = {
      {"exp(-abs(a))", "acc = -abs(acc)"},
      {"a*0.5+1.25", "acc = acc * 0.5 + 1.25"},
      {"1.25+0.5*a", "acc = acc * 0.5 + 1.25"},
      {"a*3-0.75", "acc = acc * 3 + -0.75"},
      {"0.75-a*3", "acc = acc * -3 + 0.75"},
      {"a*0.125+b*0.5", "acc = acc * 0.5 + spill0"},
      {"exp(b)-a*0.125", "acc = acc * -0.125 + spill0"},
  };
  std::mt19937_64 rng(20261128);
  for (const Case& k : cases) {
    const bool spilled = std::string(k.listing).find("spill") != std::string::npos;
    const std::string line = fmt::format("pointwise a=f32[5,7] {}out=f32[5,7] expr=\"{}\"", spilled ? "b=f32[7] " : "", k.expr);
    auto c = CompiledLine(line);
    ASSERT_NE(c, nullptr) << line;
    const std::string listing = Disassemble(c->accumulator, c->program);
    EXPECT_NE(listing.find(k.listing), std::string::npos) << k.expr << "\n" << listing;
    SCOPED_TRACE(line);
    ExpectBitIdentical(*c, rng, /*specials=*/true);
    ExpectNoDeadSpill(*c);
  }
  // A spill subtracted from the product keeps its two dispatches (it would need the
  // spill's negation), and so does a multiply by a spill: both adjacent to the add here.
  const char* kept[] = {"o0=exp(b); o1=a*0.5-exp(b)", "o0=exp(b); o1=exp(b)*a+0.5"};
  for (const char* e : kept) {
    auto c = CompiledLine(fmt::format("pointwise a=f32[5,7] b=f32[7] o0=f32[5,7] o1=f32[5,7] expr=\"{}\"", e));
    ASSERT_NE(c, nullptr);
    const std::string listing = Disassemble(c->accumulator, c->program);
    Counts n;
    Count(c->accumulator, &n);
    EXPECT_EQ(n.mul_add_immediate + n.mul_add_spill, 0) << e << "\n" << listing;
    EXPECT_TRUE(listing.find("acc = acc - spill") != std::string::npos ||
                listing.find("acc = acc + 0.5") != std::string::npos || listing.find("acc = 0.5 + acc") != std::string::npos)
        << "the pair is adjacent: " << e << "\n" << listing;
    ExpectBitIdentical(*c, rng, /*specials=*/true);
  }
}

// The suite's 8-op chain: x is needed three times. The product, which needs two values
// at once, is computed before the scaled relu (Need), so the form holds two spills, not
// three; spills and fetches fold into the next instruction, and three pairs become
// superinstructions (-abs, * 2 - 1, and * 0.5 + spill1): 10 dispatches instead of 18.
TEST(AccumulatorTest, SpillsAndFetchesFoldIntoTheNextInstruction) {
  auto c = CompiledLine("pointwise x=f32[64,1024,1024] out=f32[64,1024,1024] "
                        "expr=\"tanh(sigmoid(x)*2-1)*exp(-abs(x))+relu(x)*0.5\"");
  ASSERT_NE(c, nullptr);
  EXPECT_EQ(Disassemble(c->accumulator, c->program),
            "acc = load x\n"
            "spill0 = acc; acc = -abs(acc)\n"
            "acc = exp(acc)\n"
            "spill1 = acc; acc = spill0; acc = sigmoid(acc)\n"
            "acc = acc * 2 + -1\n"
            "acc = tanh(acc)\n"
            "acc = spill1 * acc\n"
            "spill1 = acc; acc = spill0; acc = relu(acc)\n"
            "acc = acc * 0.5 + spill1\n"
            "store out = acc\n");
  EXPECT_EQ(c->accumulator.num_spills, 2);
  for (int k = 0; k < c->accumulator.num_instructions; ++k) {
    EXPECT_NE(c->accumulator.code[k].op, OpCode::kSpill);
    EXPECT_NE(c->accumulator.code[k].op, OpCode::kFetch);
  }
}

// Every line of the pointwise suite needs at most kRegisterSpillSlots spill slots, so the
// device kernel never sends them to local memory: in shared memory at every block size up
// to 128 with 16 lanes (256 with 8), in registers beyond.
TEST(AccumulatorTest, TheSuiteNeverSpillsToLocalMemory) {
  const char* root = std::getenv("TEST_SRCDIR");
  std::ifstream in(std::string(root ? root : ".") + "/opsched/bench/suites/pointwise.txt");
  ASSERT_TRUE(in.good()) << "bench/suites/pointwise.txt not found in the runfiles";
  std::string line;
  int lines = 0;
  while (std::getline(in, line)) {
    if (line.rfind("pointwise", 0) != 0) continue;
    line = line.substr(0, line.find("  #"));
    auto c = CompiledLine(line);
    ASSERT_NE(c, nullptr);
    EXPECT_LE(c->accumulator.num_spills, kRegisterSpillSlots) << line << "\n"
                                                               << Disassemble(c->accumulator, c->program);
    ++lines;
  }
  EXPECT_GE(lines, 17);
}

TEST(AccumulatorTest, MalformedBytecodeIsAnErrorNotACrash) {
  Bytecode bc;
  bc.num_instructions = 1;
  bc.code[0].op = OpCode::kNeg;  // reads slot 0, never written
  bc.code[0].a = 0;
  EXPECT_FALSE(ToAccumulatorForm(bc).ok());
  bc.code[0].a = 200;  // beyond the slots
  EXPECT_FALSE(ToAccumulatorForm(bc).ok());
  bc.code[0].op = OpCode::kLoad;  // an input the bytecode does not have
  bc.code[0].a = 0;
  EXPECT_FALSE(ToAccumulatorForm(bc).ok());
  bc.code[0].op = static_cast<OpCode>(99);
  EXPECT_FALSE(ToAccumulatorForm(bc).ok());
  bc.num_instructions = kMaxInstructions + 1;
  EXPECT_FALSE(ToAccumulatorForm(bc).ok());
}

}  // namespace
}  // namespace opsched::pointwise
