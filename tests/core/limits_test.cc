// Sizes are checked for overflow when a workload is parsed: a tensor beyond
// TensorDesc::kMaxBytes, a stride or a storage extent that would overflow is refused with
// a message that says so, never accepted (or called "overlapping").
#include <gtest/gtest.h>

#include "core/host_tensor.h"
#include "core/workload.h"

namespace opsched {
namespace {

std::string ErrorOf(const std::string& line) {
  StatusOr<Workload> w = ParseWorkload(line);
  EXPECT_FALSE(w.ok()) << line << " parsed as " << (w.ok() ? w->ToString() : "");
  return w.ok() ? "" : std::string(w.status().message());
}

TEST(LimitsTest, ShapesBeyondTheLimitAreRefusedAtParseTime) {
  EXPECT_NE(ErrorOf("scatter data=f32[99999999999,99999999999] indices=i64[1] updates=f32[1] axis=0")
                .find("column 14: f32[99999999999,99999999999] holds more than"),
            std::string::npos);
  const std::string cube = ErrorOf("reduce x=f32[4294967296,4294967296,4294967296] axes=0 op=sum");
  EXPECT_NE(cube.find("holds more than 70368744177664 elements of 4 bytes"), std::string::npos) << cube;
  EXPECT_EQ(cube.find("overlapping"), std::string::npos) << cube;
  // An empty tensor may not hide a shape whose strides would overflow.
  EXPECT_NE(ErrorOf("reduce x=f32[0,4294967296,4294967296] axes=0 op=sum").find("holds more than"),
            std::string::npos);
  // The limit itself: 2^48 bytes.
  EXPECT_TRUE(ParseWorkload("reduce x=f32[70368744177664] axes=0 op=sum").ok());
  EXPECT_TRUE(ParseWorkload("reduce x=f16[140737488355328] axes=0 op=sum").ok());
  EXPECT_FALSE(ParseWorkload("reduce x=f32[70368744177665] axes=0 op=sum").ok());
  // An integer that does not fit in 64 bits is no integer.
  EXPECT_NE(ErrorOf("reduce x=f32[99999999999999999999] axes=0 op=sum").find("expected an integer"),
            std::string::npos);
}

TEST(LimitsTest, StridesAndStorageExtentsAreChecked) {
  EXPECT_NE(ErrorOf("reduce x=f32[4]:[4611686018427387904] axes=0 op=sum").find("stride 0 (4611686018427387904)"),
            std::string::npos);
  EXPECT_NE(ErrorOf("reduce x=f32[4194304,4]:[33554432,1] axes=0 op=sum").find(":[33554432,1] spans more than"),
            std::string::npos);
  // Large strides within the limit are fine; a size-1 dimension's stride does not count
  // towards the extent.
  StatusOr<Workload> w = ParseWorkload("reduce x=f32[2,1,3]:[1000000,999999999,1] axes=0 op=sum");
  ASSERT_TRUE(w.ok()) << w.status();
  EXPECT_EQ(w->tensors()[0].desc.storage_elements(), 1000003);
}

TEST(LimitsTest, DescriptorsFromRecordsAreCheckedAlike) {
  StatusOr<TensorDesc> d = TensorDesc::Strided(DType::kF32, Dims{1LL << 7, 1LL << 40}, Dims{1LL << 40, 1});
  ASSERT_FALSE(d.ok());
  EXPECT_NE(d.status().message().find("holds more than"), std::string::npos) << d.status();
  EXPECT_FALSE(TensorDesc::CheckedContiguous(DType::kI64, Dims{1LL << 45, 2}).ok());
  EXPECT_TRUE(TensorDesc::CheckedContiguous(DType::kI64, Dims{1LL << 44, 2}).ok());
}

TEST(LimitsTest, ControlCharactersAreRefusedAndEscapedForPrinting) {
  const std::string line = std::string("reduce x=f32[4]\0 axes=0 op=sum", 30);
  EXPECT_NE(ErrorOf(line).find("column 16: control character 0x00"), std::string::npos) << ErrorOf(line);
  EXPECT_NE(ErrorOf("reduce x=f32[4] axes=0 op=\x1b[31msum").find("control character 0x1b"),
            std::string::npos);
  EXPECT_TRUE(ParseWorkload("reduce\tx=f32[4]  axes=0 op=sum\r").ok());  // blanks are fine
  EXPECT_EQ(EscapeControlCharacters(line), "reduce x=f32[4]\\x00 axes=0 op=sum");
}

TEST(LimitsTest, EmptyTensorsHaveNoStorageToTouch) {
  // An ASan + UBSan finding: filling or copying an empty tensor passed its null data
  // pointer to memset/memcpy, undefined even for 0 bytes (run with --config=asan).
  HostTensor empty(TensorDesc::Contiguous(DType::kF32, {0, 3}));
  EXPECT_EQ(empty.storage_bytes(), 0u);
  empty.Fill(0xff);
  HostTensor none(TensorDesc::Contiguous(DType::kF16, {4, 0}));
  none.Fill(0);
  EXPECT_EQ(none.desc().numel(), 0);
}

}  // namespace
}  // namespace opsched
