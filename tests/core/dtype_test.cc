#include "core/dtype.h"

#include <gtest/gtest.h>

namespace opsched {
namespace {

TEST(DTypeTest, SizesMatchTheElementTypes) {
  EXPECT_EQ(DTypeSize(DType::kF32), 4u);
  EXPECT_EQ(DTypeSize(DType::kF16), 2u);
  EXPECT_EQ(DTypeSize(DType::kBF16), 2u);
  EXPECT_EQ(DTypeSize(DType::kI32), 4u);
  EXPECT_EQ(DTypeSize(DType::kI64), 8u);
}

TEST(DTypeTest, NamesRoundTrip) {
  for (DType dtype : kAllDTypes) {
    StatusOr<DType> parsed = ParseDType(DTypeName(dtype));
    ASSERT_TRUE(parsed.ok()) << DTypeName(dtype);
    EXPECT_EQ(*parsed, dtype);
  }
  EXPECT_EQ(DTypeName(DType::kBF16), "bf16");
}

TEST(DTypeTest, UnknownNameIsAnError) {
  StatusOr<DType> parsed = ParseDType("f64");
  ASSERT_FALSE(parsed.ok());
  EXPECT_NE(parsed.status().message().find("unknown dtype 'f64'"), std::string::npos);
  EXPECT_FALSE(ParseDType("").ok());
}

TEST(DTypeTest, Classes) {
  EXPECT_TRUE(IsFloating(DType::kBF16));
  EXPECT_FALSE(IsFloating(DType::kI64));
  EXPECT_TRUE(IsInteger(DType::kI32));
  EXPECT_FALSE(IsInteger(DType::kF16));
}

}  // namespace
}  // namespace opsched
