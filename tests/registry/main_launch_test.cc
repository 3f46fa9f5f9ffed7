// Implementation::MainLaunch, the grid the selector's model sees for a candidate
// (core/launch_shape.h), on the host part of the GPU implementations (no device needed):
// the own kernels with tiles and splits say their grid and the share of it that holds
// work; vendor libraries and configs that do not parse say nothing.
#include <gtest/gtest.h>

#include <optional>
#include <string>

#include "core/format.h"
#include "core/target.h"
#include "registry/registry.h"
#include "tests/test_util.h"

namespace opsched {
namespace {

class MainLaunchTest : public ::testing::Test {
 protected:
  MainLaunchTest() {
    h100_.kind = DeviceKind::kCuda;
    h100_.device_name = "NVIDIA H100 80GB HBM3";
    h100_.arch = "sm_90";
    h100_.sm_count = 132;
  }
  // The launch of `impl` with `config` on `line`; skips where this build has no `impl`.
  std::optional<LaunchShape> Launch(const std::string& impl, const std::string& line, const std::string& config) {
    const Implementation* i = Registry::Global().FindImplementation(impl);
    if (i == nullptr) return std::nullopt;
    StatusOr<Workload> w = Registry::Global().ParseCanonical(line);
    EXPECT_TRUE(w.ok()) << w.status();
    StatusOr<Config> c = ParseConfig(config);
    EXPECT_TRUE(c.ok()) << c.status();
    if (!w.ok() || !c.ok()) return std::nullopt;
    EXPECT_TRUE(i->Space(*w, h100_).Contains(*c)) << impl << " " << config;
    return i->MainLaunch(*w, *c, h100_);
  }
  bool Registered(const char* impl) { return Registry::Global().FindImplementation(impl) != nullptr; }
  Target h100_;
};

// The staged depthwise kernel's nchw default (DefaultConfig, what the rule serves) on an
// H100: tiles of 64 rows in strips of 4, but tiles of fewer rows where the grid would
// have fewer than 4 blocks an SM (batch 1 of a large map).
TEST_F(MainLaunchTest, StagedDepthwiseDefaultTakesTilesOfFewerRowsWhereTheGridIsShort) {
  const Implementation* impl = Registry::Global().FindImplementation("conv2d_cuda_depthwise_staged");
  if (impl == nullptr) GTEST_SKIP() << "this build has no GPU implementations";
  auto rule = [&](const std::string& x, const std::string& w, int pad, int stride) {
    const std::string line = fmt::format("conv2d x=f32[{}] w=f32[{}] stride={},{} pad={},{} dilation=1,1 groups={} "
                                         "layout=nchw math=fp32",
                                         x, w, stride, stride, pad, pad, w.substr(0, w.find(',')));
    StatusOr<Workload> wl = Registry::Global().ParseCanonical(line);
    EXPECT_TRUE(wl.ok()) << wl.status();
    if (!wl.ok()) return std::string();
    StatusOr<Config> c = impl->DefaultConfig(*wl, h100_);
    EXPECT_TRUE(c.ok()) << line << ": " << c.status();
    return c.ok() ? c->ToString() : std::string();
  };
  // Batch 32: 4608 blocks of 4 planes of 14x14.
  EXPECT_EQ(rule("32,576,14,14", "576,1,3,3", 1, 1), "block=128,columns_per_thread=1,rows=64,rows_per_thread=4");
  // Batch 1, 7x7: 960 blocks of one plane (at least 4 x 132).
  EXPECT_EQ(rule("1,960,7,7", "960,1,3,3", 1, 1), "block=128,columns_per_thread=1,rows=64,rows_per_thread=4");
  // Batch 1, 56x56: 144 whole planes are 144 blocks, tiles of 32 rows 288, of 16 rows 576.
  EXPECT_EQ(rule("1,144,56,56", "144,1,3,3", 1, 1), "block=128,columns_per_thread=1,rows=16,rows_per_thread=4");
  // 32 channels at 112x112: 2 tiles of 56 rows a plane, 64 blocks; 16 rows is the least.
  EXPECT_EQ(rule("1,32,112,112", "32,1,3,3", 1, 1), "block=128,columns_per_thread=1,rows=16,rows_per_thread=4");
  // 64 rows do not fit a 112-wide image at stride 2 (the closest legal config); 8 images
  // give thousands of blocks.
  EXPECT_EQ(rule("8,96,112,112", "96,1,3,3", 1, 2), "block=128,columns_per_thread=1,rows=32,rows_per_thread=4");
}

// MobileNetV2's stride-2 depthwise layer (a held-out line): 56 output rows in tiles of
// 32 leave 8 of 64 tile rows idle and give 2 tiles a plane; tiles of 4 fit exactly.
TEST_F(MainLaunchTest, StagedDepthwiseTilesSayTheirBlocksAndTheRowsTheyWaste) {
  if (!Registered("conv2d_cuda_depthwise_staged")) GTEST_SKIP() << "this build has no GPU implementations";
  const std::string line =
      "conv2d x=f32[8,96,112,112] w=f32[96,1,3,3] stride=2,2 pad=1,1 dilation=1,1 groups=96 layout=nchw math=fp32";
  const std::optional<LaunchShape> rows32 =
      Launch("conv2d_cuda_depthwise_staged", line, "block=128,rows=32,rows_per_thread=4");
  ASSERT_TRUE(rows32.has_value());
  EXPECT_EQ(rows32->blocks, 8 * 96 * 2);
  EXPECT_EQ(rows32->threads, 128);
  EXPECT_GT(rows32->shared_bytes, 0u);
  EXPECT_DOUBLE_EQ(rows32->useful, 56.0 / 64);
  const std::optional<LaunchShape> rows4 =
      Launch("conv2d_cuda_depthwise_staged", line, "block=128,rows=4,rows_per_thread=4");
  ASSERT_TRUE(rows4.has_value());
  EXPECT_EQ(rows4->blocks, 8 * 96 * 14);
  // One strip of 4 rows a column: 56 strips for 128 threads.
  EXPECT_DOUBLE_EQ(rows4->useful, 56.0 / 128);
  // nhwc: 144 channels in 5 blocks of 32. f32: a lane a channel, 32 lanes a pixel, so
  // the block's 4 workers take the tile's 4 strips of 8 x 2.
  const auto nhwc_line = [](const char* dtype) {
    return fmt::format("conv2d x={0}[32,56,56,144] w={0}[144,3,3,1] stride=1,1 pad=1,1 dilation=1,1 groups=144 "
                       "layout=nhwc math=fp32",
                       dtype);
  };
  const std::optional<LaunchShape> nhwc = Launch(
      "conv2d_cuda_depthwise_staged_nhwc", nhwc_line("f32"),
      "block=128,columns=8,rows=8,rows_per_thread=8");
  ASSERT_TRUE(nhwc.has_value());
  EXPECT_EQ(nhwc->blocks, 32 * 7 * 7 * 5);
  EXPECT_DOUBLE_EQ(nhwc->useful, 144.0 / 160);
  // bf16 3x3 of an even channel count: two channels a lane, 16 lanes a pixel, so 8
  // workers share the 4 strips.
  const std::optional<LaunchShape> paired = Launch(
      "conv2d_cuda_depthwise_staged_nhwc", nhwc_line("bf16"),
      "block=128,columns=8,rows=8,rows_per_thread=8");
  ASSERT_TRUE(paired.has_value());
  EXPECT_EQ(paired->blocks, 32 * 7 * 7 * 5);
  EXPECT_DOUBLE_EQ(paired->useful, 144.0 / 160 * 4 / 8);
}

// Channels-last tiles that split the map into whole tiles: MobileNetV2's 56x56 layer in
// 16 x 32 tiles computes 64 x 64 outputs a channel, 23% of them outside the map; its
// space also offers 7, 14 and 28 (56 = 8 x 7), and 14 x 28 tiles waste nothing. A
// 112-pixel map offers 7, 14 and 28 too, a 17-pixel one 17, an 8-pixel one the powers of
// two alone; configs outside the space (a 12-row tile of 56 rows) are not taken.
TEST_F(MainLaunchTest, NhwcDepthwiseTilesThatSplitTheMapIntoWholeTilesWasteNothing) {
  if (!Registered("conv2d_cuda_depthwise_staged_nhwc")) GTEST_SKIP() << "this build has no GPU implementations";
  const auto line = [](int h, int w) {
    return fmt::format(
        "conv2d x=bf16[32,{},{},144] w=bf16[144,3,3,1] stride=1,1 pad=1,1 dilation=1,1 groups=144 layout=nhwc "
        "math=fp32",
        h, w);
  };
  const std::optional<LaunchShape> pow2 = Launch("conv2d_cuda_depthwise_staged_nhwc", line(56, 56),
                                                 "block=128,channels=16,columns=32,rows=16,rows_per_thread=8");
  ASSERT_TRUE(pow2.has_value());
  EXPECT_EQ(pow2->blocks, 32 * 4 * 2 * 9);
  EXPECT_DOUBLE_EQ(pow2->useful, (56.0 / 64) * (56.0 / 64));
  const std::optional<LaunchShape> whole = Launch("conv2d_cuda_depthwise_staged_nhwc", line(56, 56),
                                                  "block=128,channels=16,columns=28,rows=14,rows_per_thread=2");
  ASSERT_TRUE(whole.has_value());
  EXPECT_EQ(whole->blocks, 32 * 4 * 2 * 9);
  EXPECT_DOUBLE_EQ(whole->useful, 1.0);
  // The window of 16 x 30 pixels of 16 bf16 channels, and the 9 taps of each as float.
  EXPECT_EQ(whole->shared_bytes, (16u * 30 * 2 + 9 * 4) * 16);
  const Implementation* nhwc = Registry::Global().FindImplementation("conv2d_cuda_depthwise_staged_nhwc");
  const auto offers = [&](int h, int w, const std::string& config) {
    StatusOr<Workload> parsed = Registry::Global().ParseCanonical(line(h, w));
    StatusOr<Config> c = ParseConfig(config);
    EXPECT_TRUE(parsed.ok() && c.ok());
    return parsed.ok() && c.ok() && nhwc->Space(*parsed, h100_).Contains(*c);
  };
  for (const char* rows : {"7", "14", "28"}) {
    EXPECT_TRUE(offers(112, 56, fmt::format("block=128,channels=32,columns=8,rows={},rows_per_thread=1", rows))) << rows;
  }
  EXPECT_TRUE(offers(17, 56, "block=128,channels=32,columns=8,rows=17,rows_per_thread=1"));
  EXPECT_FALSE(offers(56, 56, "block=128,channels=32,columns=8,rows=12,rows_per_thread=1"));
  EXPECT_FALSE(offers(8, 56, "block=128,channels=32,columns=8,rows=7,rows_per_thread=1"));
  // rows_per_thread still divides rows: 14-row tiles take strips of 1 or 2 rows.
  EXPECT_FALSE(offers(56, 56, "block=128,channels=16,columns=28,rows=14,rows_per_thread=4"));
}

// MobileNetV2's 56x56 depthwise layer: rows of 56 f16 are seven 16-byte vectors, so the
// staged rows start 16-byte aligned (4 floats of left padding, a pitch of 64 floats: the
// 61 floats that the last output's taps reach, rounded up); 57 columns are staged element
// by element (1 float of padding, a pitch of 59). A block holds a whole plane: 58 staged
// rows, and the 9 taps after them.
TEST_F(MainLaunchTest, StagedDepthwiseRowsOfWholeVectorsStartAligned) {
  if (!Registered("conv2d_cuda_depthwise_staged")) GTEST_SKIP() << "this build has no GPU implementations";
  const auto line = [](int w) {
    return "conv2d x=f16[32,144,56," + std::to_string(w) +
           "] w=f16[144,1,3,3] stride=1,1 pad=1,1 dilation=1,1 groups=144 layout=nchw math=fp32";
  };
  const std::string config = "block=128,rows=64,rows_per_thread=4";
  const std::optional<LaunchShape> vector = Launch("conv2d_cuda_depthwise_staged", line(56), config);
  ASSERT_TRUE(vector.has_value());
  EXPECT_EQ(vector->shared_bytes, (58u * 64 + 9) * sizeof(float));
  const std::optional<LaunchShape> element = Launch("conv2d_cuda_depthwise_staged", line(57), config);
  ASSERT_TRUE(element.has_value());
  EXPECT_EQ(element->shared_bytes, (58u * 59 + 9) * sizeof(float));
  // At stride 2 with 28 output columns (a warp's strips in two row groups), element by
  // element: a pitch of 59 (the 5x5 taps of the last output reach 2 + 54 + 5 - 2 floats).
  const std::optional<LaunchShape> strided = Launch(
      "conv2d_cuda_depthwise_staged",
      "conv2d x=f16[64,72,56,56] w=f16[72,1,5,5] stride=2,2 pad=2,2 dilation=1,1 groups=72 layout=nchw math=fp32",
      "block=128,rows=32,rows_per_thread=4");
  ASSERT_TRUE(strided.has_value());
  EXPECT_EQ(strided->shared_bytes, (59u * 59 + 25) * sizeof(float));
}

// BERT-base's bias gradient (a held-out line): 768 columns in vectors of 4 over 128-wide
// blocks leave a quarter of the lanes idle; split 128 makes 256 blocks.
TEST_F(MainLaunchTest, ReductionsSayTheirSplitGridAndIdleLanes) {
  if (!Registered("reduce_cuda_columns")) GTEST_SKIP() << "this build has no GPU implementations";
  const std::string columns = "reduce x=f32[2048,768] axes=0 op=sum";
  const std::optional<LaunchShape> wide =
      Launch("reduce_cuda_columns", columns, "block_x=128,block_y=4,split=128,vector=4");
  ASSERT_TRUE(wide.has_value());
  EXPECT_EQ(wide->blocks, 2 * 128);
  EXPECT_EQ(wide->threads, 512);
  EXPECT_EQ(wide->shared_bytes, 512u * 4 * sizeof(float));
  EXPECT_DOUBLE_EQ(wide->useful, 0.75);
  const std::optional<LaunchShape> narrow =
      Launch("reduce_cuda_columns", columns, "block_x=32,block_y=4,split=128,vector=2");
  ASSERT_TRUE(narrow.has_value());
  EXPECT_EQ(narrow->blocks, 12 * 128);
  EXPECT_DOUBLE_EQ(narrow->useful, 1.0);
  // Rows: 8 groups of 32 a block over 4096 rows; a group of 1024 lanes over 96 vectors
  // of a 384-term row has 96 lanes with a load.
  const std::optional<LaunchShape> rows =
      Launch("reduce_cuda_rows", "reduce x=f32[4096,768] axes=1 op=sum", "block=256,group=32,split=1,vector=4");
  ASSERT_TRUE(rows.has_value());
  EXPECT_EQ(rows->blocks, 4096 / 8);
  EXPECT_DOUBLE_EQ(rows->useful, 1.0);
  const std::optional<LaunchShape> sparse =
      Launch("reduce_cuda_rows", "reduce x=f32[64,384] axes=1 op=sum", "block=256,group=1024,split=1,vector=4");
  ASSERT_TRUE(sparse.has_value());
  EXPECT_EQ(sparse->blocks, 64);
  EXPECT_EQ(sparse->threads, 1024);
  EXPECT_DOUBLE_EQ(sparse->useful, 96.0 / 1024);
  const std::optional<LaunchShape> staged = Launch("reduce_cuda_staged", "reduce x=f32[32,64,56,56] axes=0,2,3 op=sum",
                                                   "block_x=32,block_y=8,group=16,split=1,vector=4");
  ASSERT_TRUE(staged.has_value());
  EXPECT_GT(staged->blocks, 0);
}

TEST_F(MainLaunchTest, VendorLibrariesAndUnparsedConfigsSayNothing) {
  if (!Registered("reduce_cuda_columns")) GTEST_SKIP() << "this build has no GPU implementations";
  const Implementation* columns = Registry::Global().FindImplementation("reduce_cuda_columns");
  const Workload w = *Registry::Global().ParseCanonical("reduce x=f32[2048,768] axes=0 op=sum");
  EXPECT_FALSE(columns->MainLaunch(w, *ParseConfig("no_such_knob=1"), h100_).has_value());
  EXPECT_FALSE(columns->MainLaunch(w, *ParseConfig("block_x=wide"), h100_).has_value());
  const Implementation* cub = Registry::Global().FindImplementation("reduce_cub_segmented");
  if (cub != nullptr) {
    EXPECT_FALSE(cub->MainLaunch(w, Config(), h100_).has_value());
  }
  const Implementation* cpu = Registry::Global().FindImplementation("reduce_cpu");
  if (cpu != nullptr) {
    EXPECT_FALSE(cpu->MainLaunch(w, Config(), h100_).has_value());
  }
}

}  // namespace
}  // namespace opsched
