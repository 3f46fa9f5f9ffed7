#include "core/tensor_desc.h"

#include <gtest/gtest.h>

#include "core/tensor.h"

namespace opsched {
namespace {

TEST(TensorDescTest, ContiguousStridesAndSizes) {
  TensorDesc d = TensorDesc::Contiguous(DType::kF16, {2, 3, 4});
  EXPECT_EQ(d.rank(), 3);
  EXPECT_EQ(d.strides(), (Dims{12, 4, 1}));
  EXPECT_EQ(d.numel(), 24);
  EXPECT_EQ(d.bytes(), 48);
  EXPECT_EQ(d.storage_elements(), 24);
  EXPECT_TRUE(d.is_contiguous());
  EXPECT_TRUE(d.is_non_overlapping());
  EXPECT_EQ(d.ToString(), "f16[2,3,4]");
}

TEST(TensorDescTest, ScalarAndEmpty) {
  TensorDesc scalar = TensorDesc::Contiguous(DType::kF32, {});
  EXPECT_EQ(scalar.numel(), 1);
  EXPECT_EQ(scalar.storage_elements(), 1);
  EXPECT_EQ(scalar.ToString(), "f32[]");
  TensorDesc empty = TensorDesc::Contiguous(DType::kI64, {4, 0, 3});
  EXPECT_EQ(empty.numel(), 0);
  EXPECT_EQ(empty.bytes(), 0);
  EXPECT_EQ(empty.storage_elements(), 0);
  EXPECT_EQ(empty.strides(), (Dims{3, 3, 1}));
}

TEST(TensorDescTest, TransposedIsStridedAndPrintsItsStrides) {
  StatusOr<TensorDesc> t = TensorDesc::Strided(DType::kF32, {64, 32}, {1, 64});
  ASSERT_TRUE(t.ok());
  EXPECT_FALSE(t->is_contiguous());
  EXPECT_TRUE(t->is_non_overlapping());
  EXPECT_EQ(t->storage_elements(), 64 * 32);
  EXPECT_EQ(t->ToString(), "f32[64,32]:[1,64]");
}

TEST(TensorDescTest, SlicedRowsSpanMoreStorageThanElements) {
  // Every other row of an 8x10 matrix: 4 rows of 10, row stride 20.
  StatusOr<TensorDesc> t = TensorDesc::Strided(DType::kF32, {4, 10}, {20, 1});
  ASSERT_TRUE(t.ok());
  EXPECT_EQ(t->numel(), 40);
  EXPECT_EQ(t->storage_elements(), 3 * 20 + 10);
  EXPECT_FALSE(t->is_contiguous());
  EXPECT_TRUE(t->is_non_overlapping());
}

TEST(TensorDescTest, BroadcastStrideOverlaps) {
  StatusOr<TensorDesc> t = TensorDesc::Strided(DType::kF32, {5, 3}, {0, 1});
  ASSERT_TRUE(t.ok());
  EXPECT_FALSE(t->is_non_overlapping());
  StatusOr<TensorDesc> u = TensorDesc::Strided(DType::kF32, {4, 4}, {2, 1});
  ASSERT_TRUE(u.ok());
  EXPECT_FALSE(u->is_non_overlapping());
}

TEST(TensorDescTest, SizeOneDimensionsGetCanonicalStrides) {
  StatusOr<TensorDesc> t = TensorDesc::Strided(DType::kF32, {3, 1, 5}, {5, 999, 1});
  ASSERT_TRUE(t.ok());
  EXPECT_TRUE(t->is_contiguous());
  EXPECT_EQ(*t, TensorDesc::Contiguous(DType::kF32, {3, 1, 5}));
  EXPECT_EQ(t->ToString(), "f32[3,1,5]");
}

TEST(TensorDescTest, RejectsBadLayouts) {
  EXPECT_FALSE(TensorDesc::Strided(DType::kF32, {2, 3}, {1}).ok());
  EXPECT_FALSE(TensorDesc::Strided(DType::kF32, {2, -3}, {3, 1}).ok());
  EXPECT_FALSE(TensorDesc::Strided(DType::kF32, {2, 3}, {-3, 1}).ok());
  EXPECT_FALSE(TensorDesc::Contiguous(DType::kF32, {1, 1, 1, 1, 1, 1, 1, 1, 1}).Validate().ok());
}

TEST(TensorTest, OverlapOfStorageRanges) {
  alignas(8) char storage[400];
  Tensor a{TensorDesc::Contiguous(DType::kF32, {10}), storage, Device::Cpu()};
  Tensor b{TensorDesc::Contiguous(DType::kF32, {10}), storage + 36, Device::Cpu()};
  Tensor c{TensorDesc::Contiguous(DType::kF32, {10}), storage + 40, Device::Cpu()};
  EXPECT_TRUE(a.Overlaps(b));
  EXPECT_FALSE(a.Overlaps(c));
  Tensor empty{TensorDesc::Contiguous(DType::kF32, {0}), storage, Device::Cpu()};
  EXPECT_FALSE(a.Overlaps(empty));
}

}  // namespace
}  // namespace opsched
