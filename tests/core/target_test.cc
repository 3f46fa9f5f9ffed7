#include "core/target.h"

#include <gtest/gtest.h>

namespace opsched {
namespace {

Target H200() {
  Target t;
  t.kind = DeviceKind::kCuda;
  t.device_name = "NVIDIA H200";
  t.arch = "sm_90";
  t.sm_count = 132;
  t.memory_bytes = 150754820096;
  t.l2_bytes = 62914560;
  t.driver_version = 13000;
  t.runtime_version = 13000;
  t.cublas_version = 130100;
  t.cudnn_version = 91300;
  return t;
}

TEST(TargetTest, FingerprintIsStableAcrossReleases) {
  // Records persist fingerprints: this value must never change. It is FNV-1a 64 over
  // the length-prefixed strings and little-endian int64s (computed independently in
  // Python when the format was fixed).
  EXPECT_EQ(H200().fingerprint(), 0xec209a5df2fb3f33ull);
}

TEST(TargetTest, FingerprintIgnoresDeviceIndexAndMemory) {
  Target a = H200();
  Target b = H200();
  b.device_index = 3;
  b.memory_bytes = 1;
  b.l2_bytes = 2;
  EXPECT_EQ(a.fingerprint(), b.fingerprint());
}

TEST(TargetTest, FingerprintChangesWithEveryDecidingField) {
  const uint64_t base = H200().fingerprint();
  std::vector<Target> variants(8, H200());
  variants[0].kind = DeviceKind::kHip;
  variants[1].device_name = "NVIDIA H100 80GB HBM3";
  variants[2].arch = "sm_80";
  variants[3].sm_count = 66;
  variants[4].driver_version = 12080;
  variants[5].runtime_version = 12080;
  variants[6].cublas_version = 120900;
  variants[7].cudnn_version = 90100;
  for (size_t i = 0; i < variants.size(); ++i) {
    EXPECT_NE(variants[i].fingerprint(), base) << "field " << i;
  }
}

TEST(TargetTest, ArchKeyGroupsSameArchitecture) {
  Target h100 = H200();
  h100.device_name = "NVIDIA H100 80GB HBM3";
  h100.cudnn_version = 90100;
  EXPECT_EQ(h100.arch_key(), H200().arch_key());
  EXPECT_EQ(H200().arch_key(), "cuda/sm_90");
}

TEST(TargetTest, CpuTargetDescribesThisMachine) {
  Target cpu = CpuTarget();
  EXPECT_EQ(cpu.kind, DeviceKind::kCpu);
  EXPECT_FALSE(cpu.device_name.empty());
  EXPECT_FALSE(cpu.arch.empty());
  EXPECT_GE(cpu.sm_count, 1);
  EXPECT_GT(cpu.memory_bytes, 0);
  EXPECT_EQ(cpu.fingerprint(), CpuTarget().fingerprint());
  std::vector<Target> all = ListTargets();
  ASSERT_FALSE(all.empty());
  EXPECT_EQ(all[0].kind, DeviceKind::kCpu);
}

TEST(DeviceTest, ParseAndPrint) {
  for (const char* text : {"cpu", "cuda:0", "cuda:3", "hip:1"}) {
    StatusOr<Device> d = ParseDevice(text);
    ASSERT_TRUE(d.ok()) << text;
    EXPECT_EQ(d->ToString(), text);
  }
  StatusOr<Device> plain = ParseDevice("cuda");
  ASSERT_TRUE(plain.ok());
  EXPECT_EQ(*plain, Device::Cuda(0));
  for (const char* bad : {"", "gpu", "cuda:", "cuda:-1", "cuda:x", "cpu:0"}) {
    EXPECT_FALSE(ParseDevice(bad).ok()) << bad;
  }
}

}  // namespace
}  // namespace opsched
