#include "core/status.h"

#include <gtest/gtest.h>

#include "core/data_error.h"

namespace opsched {
namespace {

Status FailsWith(StatusCode code) { return Status(code, "inner failure"); }

Status Propagates(StatusCode code, bool* reached_end) {
  OPSCHED_RETURN_IF_ERROR(FailsWith(code));
  *reached_end = true;
  return absl::OkStatus();
}

StatusOr<int> MaybeInt(bool ok) {
  if (!ok) return absl::NotFoundError("no int");
  return 41;
}

StatusOr<int> AddOne(bool ok) {
  OPSCHED_ASSIGN_OR_RETURN(int v, MaybeInt(ok));
  return v + 1;
}

TEST(StatusTest, ReturnIfErrorStopsAtTheFirstError) {
  bool reached = false;
  Status s = Propagates(StatusCode::kDataLoss, &reached);
  EXPECT_EQ(s.code(), StatusCode::kDataLoss);
  EXPECT_FALSE(reached);
  reached = false;
  EXPECT_TRUE(Propagates(StatusCode::kOk, &reached).ok());
  EXPECT_TRUE(reached);
}

TEST(StatusTest, AssignOrReturnPropagatesValueAndError) {
  StatusOr<int> good = AddOne(true);
  ASSERT_TRUE(good.ok());
  EXPECT_EQ(*good, 42);
  StatusOr<int> bad = AddOne(false);
  EXPECT_EQ(bad.status().code(), StatusCode::kNotFound);
  EXPECT_EQ(bad.status().message(), "no int");
}

TEST(StatusTest, AnnotateKeepsCodeAndPrefixesContext) {
  Status s = Annotate(absl::InvalidArgumentError("index 7 out of range"), "scatter");
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(s.message(), "scatter: index 7 out of range");
  EXPECT_TRUE(Annotate(absl::OkStatus(), "ignored").ok());
}

TEST(StatusTest, AnnotateKeepsADataErrorADataError) {
  const Status s = Annotate(MarkDataError(absl::InvalidArgumentError("index 7 out of range")), "scatter_cpu");
  EXPECT_TRUE(IsDataError(s));
  EXPECT_EQ(s.message(), "scatter_cpu: index 7 out of range");
  EXPECT_FALSE(IsDataError(Annotate(absl::InvalidArgumentError("x"), "y")));
}

}  // namespace
}  // namespace opsched
