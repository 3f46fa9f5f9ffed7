// Canonical workloads stay within TensorDesc's limits, outputs included: an op's
// attributes cannot grow an output beyond them (a fuzzing finding: a convolution padded
// by 429496729 had an output of 2^67 elements whose size overflowed).
#include <gtest/gtest.h>

#include "registry/registry.h"
#include "tests/test_util.h"

namespace opsched {
namespace {

TEST(CanonicalLimitsTest, OutputsBeyondTheLimitAreRefused) {
  StatusOr<Workload> padded = Registry::Global().ParseCanonical(
      "conv2d x=f32[32,64,56,56] w=f32[64,64,3,3] stride=1,1 pad=429496729,1 dilation=1,1 groups=1 "
      "layout=nchw math=fp32");
  ASSERT_FALSE(padded.ok());
  EXPECT_NE(padded.status().message().find("conv2d: output 0: f32[32,64,858993512,56] holds more than"),
            std::string::npos)
      << padded.status();
  // The same layer with an ordinary padding is fine.
  OPSCHED_EXPECT_OK(Registry::Global()
                        .ParseCanonical("conv2d x=f32[32,64,56,56] w=f32[64,64,3,3] stride=1,1 pad=1,1 "
                                        "dilation=1,1 groups=1 layout=nchw math=fp32")
                        .status());
}

TEST(CanonicalLimitsTest, WorkloadsBuiltInCodeAreCheckedToo) {
  // The Runtime builds workloads from the caller's tensors; Contiguous() does not check.
  Workload w("reduce");
  w.SetTensor("x", TensorDesc::Contiguous(DType::kF32, {1LL << 30, 1LL << 30}));
  w.SetAttr("axes", int64_t{0});
  w.SetAttr("op", std::string("sum"));
  Status s = Registry::Global().Canonicalize(&w);
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.message().find("reduce: tensor 'x': f32[1073741824,1073741824] holds more than"),
            std::string::npos)
      << s;
}

TEST(CanonicalLimitsTest, CanonicalLinesParseBack) {
  // A fuzzing finding: a scalar's reduction over every axis has an empty axes list,
  // which printed as "axes=" and did not parse back (so its records were unusable).
  StatusOr<Workload> scalar = Registry::Global().ParseCanonical("reduce x=f32[] op=sum");
  ASSERT_TRUE(scalar.ok()) << scalar.status();
  const std::string line = scalar->ToString();
  EXPECT_NE(line.find("axes=[]"), std::string::npos) << line;
  StatusOr<Workload> back = Registry::Global().ParseCanonical(line);
  ASSERT_TRUE(back.ok()) << line << ": " << back.status();
  EXPECT_EQ(back->hash(), scalar->hash());
  EXPECT_EQ(back->ToString(), line);
  // Brackets are a list of any length.
  StatusOr<Workload> one = ParseWorkload("reduce x=f32[4,4] axes=[1] op=sum");
  ASSERT_TRUE(one.ok()) << one.status();
  EXPECT_EQ(*one->GetInts("axes"), Dims{1});
}

}  // namespace
}  // namespace opsched
