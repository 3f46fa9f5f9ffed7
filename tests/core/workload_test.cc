#include "core/workload.h"

#include <gtest/gtest.h>

namespace opsched {
namespace {

TEST(WorkloadTest, IssueLinesRoundTripExactly) {
  for (const char* line : {
           "scatter data=f32[1000,256,7,7] indices=i64[1000,256,7,7] "
           "updates=f32[1000,256,7,7] axis=0 reduction=none",
           "reduce x=f32[128,16,28,28] axes=0,2,3 op=sum keepdims=false",
           "conv2d x=f32[32,64,56,56] w=f32[64,64,3,3] stride=1,1 pad=1,1 dilation=1,1 "
           "groups=1 layout=nchw math=fp32",
           "conv2d_bias_act x=f32[128,1,28,28] w=f32[16,1,3,3] b=f32[16] stride=1,1 pad=1,1 "
           "dilation=1,1 groups=1 layout=nchw math=fp32 act=relu",
           "reduce x=bf16[] axes=0 op=max",
           "scatter data=f16[64,32]:[1,64] indices=i32[3,2] updates=f16[3,2] axis=-1",
           "op scale=0.5 tiny=1e-30 flag=true big=-12",
       }) {
    StatusOr<Workload> w = ParseWorkload(line);
    ASSERT_TRUE(w.ok()) << line << ": " << w.status();
    EXPECT_EQ(w->ToString(), line);
  }
}

TEST(WorkloadTest, AttributeTypesFollowTheText) {
  StatusOr<Workload> w =
      ParseWorkload("x a=3 b=1,2 c=2.5 d=true e=none f=-4 g=1e3  # trailing comment");
  ASSERT_TRUE(w.ok()) << w.status();
  EXPECT_EQ(*w->GetInt("a"), 3);
  EXPECT_EQ(*w->GetInts("b"), (Dims{1, 2}));
  EXPECT_EQ(*w->GetInts("a"), (Dims{3}));  // a single int reads as a list of one
  EXPECT_DOUBLE_EQ(*w->GetFloat("c"), 2.5);
  EXPECT_DOUBLE_EQ(*w->GetFloat("a"), 3.0);
  EXPECT_TRUE(*w->GetBool("d"));
  EXPECT_EQ(*w->GetString("e"), "none");
  EXPECT_EQ(*w->GetInt("f"), -4);
  EXPECT_DOUBLE_EQ(*w->GetFloat("g"), 1000.0);
  EXPECT_EQ(w->GetInt("c").status().message(), "x: attribute 'c' is float, expected int");
  EXPECT_EQ(w->GetString("zz").status().message(), "x: missing attribute 'zz'");
}

struct BadLine {
  const char* line;
  const char* message;
};

TEST(WorkloadTest, ErrorsPointAtTheColumn) {
  for (const BadLine& bad : {
           BadLine{"", "column 1: empty workload line"},
           BadLine{"   # only a comment", "column 1: empty workload line"},
           BadLine{"9op x=f32[1]", "column 1: expected an op name, got '9op'"},
           BadLine{"scatter data f32[2]", "column 9: expected name=value, got 'data'"},
           BadLine{"scatter data=f33[2]", "unknown dtype 'f33'"},
           BadLine{"scatter data=f32[2,x]", "column 20: expected an integer in the shape, got 'x'"},
           BadLine{"scatter data=f32[2", "column 17: missing ']'"},
           BadLine{"scatter data=f32[2]:1", "column 20: expected ':[strides]'"},
           BadLine{"scatter axis=0 axis=1", "column 16: 'axis' is given twice"},
           BadLine{"scatter axis=", "column 14: 'axis' has no value"},
           BadLine{"scatter axis=1.2.3", "column 14: bad number '1.2.3'"},
           BadLine{"scatter mode=a/b", "column 14: bad attribute value 'a/b'"},
           BadLine{"scatter data=f32[-2]", "column 18: negative dimension"},
       }) {
    StatusOr<Workload> w = ParseWorkload(bad.line);
    ASSERT_FALSE(w.ok()) << bad.line;
    EXPECT_NE(w.status().message().find(bad.message), std::string::npos)
        << bad.line << " gave: " << w.status().message();
  }
}

TEST(WorkloadTest, HashDependsOnEveryPart) {
  const char* base = "scatter data=f32[8,4] indices=i64[8,4] updates=f32[8,4] axis=0 reduction=add";
  uint64_t h = ParseWorkload(base)->hash();
  EXPECT_EQ(ParseWorkload(base)->hash(), h);
  for (const char* other : {
           "scatter data=f32[8,5] indices=i64[8,4] updates=f32[8,4] axis=0 reduction=add",
           "scatter data=f16[8,4] indices=i64[8,4] updates=f32[8,4] axis=0 reduction=add",
           "scatter data=f32[8,4] indices=i32[8,4] updates=f32[8,4] axis=0 reduction=add",
           "scatter data=f32[8,4]:[1,8] indices=i64[8,4] updates=f32[8,4] axis=0 reduction=add",
           "scatter data=f32[8,4] indices=i64[8,4] updates=f32[8,4] axis=1 reduction=add",
           "scatter data=f32[8,4] indices=i64[8,4] updates=f32[8,4] axis=0 reduction=max",
           "scatter data=f32[8,4] indices=i64[8,4] updates=f32[8,4] axis=0",
           "gather data=f32[8,4] indices=i64[8,4] updates=f32[8,4] axis=0 reduction=add",
       }) {
    EXPECT_NE(ParseWorkload(other)->hash(), h) << other;
  }
}

TEST(WorkloadTest, SetReplacesInPlaceAndClearKeepsNothing) {
  Workload w("reduce");
  w.SetTensor("x", TensorDesc::Contiguous(DType::kF32, {4}));
  w.SetAttr("op", std::string("sum"));
  w.SetAttr("op", std::string("max"));
  EXPECT_EQ(w.ToString(), "reduce x=f32[4] op=max");
  w.Clear();
  EXPECT_EQ(w.ToString(), "");
  EXPECT_TRUE(w.tensors().empty());
}

TEST(WorkloadTest, FeaturesDescribeShapes) {
  Workload w = *ParseWorkload("reduce x=f32[1023,1] axes=0 keepdims=true");
  std::vector<double> f = w.Features();
  ASSERT_EQ(f.size(), 8u + 2u);
  EXPECT_DOUBLE_EQ(f[0], 10.0);  // log2(1 + 1023)
  EXPECT_DOUBLE_EQ(f[1], 2.0);   // rank
  EXPECT_DOUBLE_EQ(f[2], 10.0);
  EXPECT_DOUBLE_EQ(f[3], 1.0);
  EXPECT_DOUBLE_EQ(f[8], 0.0);   // axes
  EXPECT_DOUBLE_EQ(f[9], 1.0);   // keepdims
}

TEST(WorkloadTest, QuotedStringsHoldBlanksAndRoundTrip) {
  const std::string line = "pointwise a=f32[4] out=f32[4] expr=\"relu(a + 1) # not a comment\" mode=fast  # comment";
  StatusOr<Workload> w = ParseWorkload(line);
  ASSERT_TRUE(w.ok()) << w.status();
  EXPECT_EQ(*w->GetString("expr"), "relu(a + 1) # not a comment");
  EXPECT_EQ(*w->GetString("mode"), "fast");
  EXPECT_EQ(w->ToString(), "pointwise a=f32[4] out=f32[4] expr=\"relu(a + 1) # not a comment\" mode=fast");
  StatusOr<Workload> again = ParseWorkload(w->ToString());
  ASSERT_TRUE(again.ok()) << again.status();
  EXPECT_EQ(*again, *w);
  // Strings that would read back as something else print quoted.
  Workload s("x");
  s.SetAttr("a", std::string("true")).SetAttr("b", std::string("")).SetAttr("c", std::string("1e3"));
  EXPECT_EQ(s.ToString(), "x a=\"true\" b=\"\" c=\"1e3\"");
  StatusOr<Workload> back = ParseWorkload(s.ToString());
  ASSERT_TRUE(back.ok()) << back.status();
  EXPECT_EQ(*back, s);
}

TEST(WorkloadTest, UnterminatedQuoteIsAnErrorAtItsColumn) {
  EXPECT_EQ(ParseWorkload("pointwise a=f32[4] expr=\"relu(a)").status().message(),
            "column 25: unterminated string (no closing '\"')");
  EXPECT_EQ(ParseWorkload("pointwise expr=\"a\"b").status().message(),
            "column 19: expected a blank after the closing '\"'");
  EXPECT_EQ(ParseWorkload("pointwise expr=a\"b\"").status().message(),
            "column 17: a '\"' may only start a value");
}

}  // namespace
}  // namespace opsched
