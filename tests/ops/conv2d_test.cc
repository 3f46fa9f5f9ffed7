// Every conv2d-family implementation (forward, fused bias + activation, backward data and
// filter) against the float64 reference: a randomised sweep of shapes, strides, paddings,
// dilations and groups (depthwise included) in both layouts, every activation, both math
// modes, f16/bf16, non-contiguous inputs, empty batches and single elements; the
// Runtime's Conv2d, Conv2dBiasActivation and Conv2dBackward; validation errors. Runs on
// the CPU, and on the GPU when there is one (cuDNN algorithms a shape does not support
// are left out of the space, so every config listed must run and be right).
#include <gtest/gtest.h>

#include <cstdlib>
#include <cstring>
#include <functional>
#include <random>
#include <set>

#include "core/format.h"
#include "core/gpu/gpu_backend.h"
#include "ops/conv2d/conv2d_def.h"
#include "ops/conv2d/conv2d_reference.h"
#include "opsched/runtime.h"
#include "strategies/dispatcher.h"
#include "tests/ops/op_test_util.h"
#include "tests/records/record_factory.h"
#include "tests/test_util.h"
#include "tuner/trial.h"

namespace opsched {
namespace {

using testing::ApplicableImplementations;
using testing::CheckAllImplementations;
using testing::CheckConfigs;
using testing::CheckRuntimeCall;

// One convolution's sizes and attributes; Line() writes the workload line of an op.
struct Shape {
  int64_t n, c, h, w, k, r, s;
  int64_t stride_h = 1, stride_w = 1, pad_h = 0, pad_w = 0, dil_h = 1, dil_w = 1, groups = 1;
  bool nhwc = false;

  int64_t P() const { return conv2d::OutputSize(h, r, stride_h, pad_h, dil_h); }
  int64_t Q() const { return conv2d::OutputSize(w, s, stride_w, pad_w, dil_w); }
  std::string Dims4(int64_t a, int64_t b, int64_t c2, int64_t d) const {
    return nhwc ? fmt::format("{},{},{},{}", a, c2, d, b) : fmt::format("{},{},{},{}", a, b, c2, d);
  }
  std::string Line(const std::string& op, const std::string& dtype, const std::string& extra = "") const {
    std::string line = fmt::format("{} x={}[{}] w={}[{}]", op, dtype, Dims4(n, c, h, w), dtype, Dims4(k, c / groups, r, s));
    if (op == "conv2d_bias_act") line += fmt::format(" b={}[{}]", dtype, k);
    if (op == "conv2d_backward") line += fmt::format(" dy={}[{}]", dtype, Dims4(n, k, P(), Q()));
    line += fmt::format(" stride={},{} pad={},{} dilation={},{} groups={} layout={}", stride_h, stride_w, pad_h,
                        pad_w, dil_h, dil_w, groups, nhwc ? "nhwc" : "nchw");
    return line + extra;
  }
};

// A random legal shape; small enough for the CPU reference on two cores.
Shape RandomShape(std::mt19937_64& rng) {
  auto pick = [&](int lo, int hi) { return std::uniform_int_distribution<int64_t>(lo, hi)(rng); };
  Shape s{};
  s.groups = std::vector<int64_t>{1, 1, 2, 3}[pick(0, 3)];
  s.c = s.groups * pick(1, 4);
  s.k = s.groups * pick(1, 4);
  if (pick(0, 5) == 0) {  // depthwise
    s.groups = s.c;
    s.k = s.c * pick(1, 2);
  }
  s.n = pick(1, 3);
  s.r = pick(1, 4);
  s.s = pick(1, 4);
  s.stride_h = pick(1, 3);
  s.stride_w = pick(1, 3);
  s.pad_h = pick(0, 2);
  s.pad_w = pick(0, 2);
  s.dil_h = pick(1, 2);
  s.dil_w = pick(1, 2);
  s.h = pick(1, 9) + s.dil_h * (s.r - 1);
  s.w = pick(1, 9) + s.dil_w * (s.s - 1);
  s.nhwc = pick(0, 1) == 1;
  return s;
}

class Conv2dTest : public ::testing::TestWithParam<DeviceKind> {
 protected:
  void SetUp() override {
    if (GetParam() != DeviceKind::kCpu) OPSCHED_REQUIRE_GPU();
    target_ = GetParam() == DeviceKind::kCpu ? CpuTarget() : *QueryTarget(Device{gpu::BackendKind(), 0});
    // Fresh shapes and inputs every run; OPSCHED_TEST_SEED replays a failing one.
    const char* seed = std::getenv("OPSCHED_TEST_SEED");
    const uint64_t value = seed != nullptr ? std::strtoull(seed, nullptr, 10) : std::random_device{}();
    rng_.seed(value);
    RecordProperty("seed", std::to_string(value));
    std::printf("seed %llu (OPSCHED_TEST_SEED=%llu replays it)\n", static_cast<unsigned long long>(value),
                static_cast<unsigned long long>(value));
  }
  Workload Canonical(const std::string& line) {
    StatusOr<Workload> w = Registry::Global().ParseCanonical(line);
    EXPECT_TRUE(w.ok()) << line << ": " << w.status();
    return w.ok() ? *w : Workload();
  }
  Status CheckLine(const std::string& line, size_t configs, int* runs) {
    return CheckWorkload(Canonical(line), configs, runs);
  }
  // `implementation` applies to the shape in f32, f16 and bf16, and every implementation
  // (up to `configs` configs each) matches the reference on its conv2d and conv2d_bias_act
  // (relu) lines.
  Status CheckEveryDtype(const std::string& implementation, const Shape& s, size_t configs, int* runs) {
    const Implementation* impl = registry_.FindImplementation(implementation);
    if (impl == nullptr) return absl::NotFoundError(implementation);
    for (const char* dtype : {"f32", "f16", "bf16"}) {
      OPSCHED_RETURN_IF_ERROR(Annotate(impl->Applicable(Canonical(s.Line("conv2d", dtype)), target_), implementation));
      OPSCHED_RETURN_IF_ERROR(CheckLine(s.Line("conv2d", dtype), configs, runs));
      OPSCHED_RETURN_IF_ERROR(CheckLine(s.Line("conv2d_bias_act", dtype, " act=relu"), configs, runs));
    }
    return absl::OkStatus();
  }
  Status CheckWorkload(const Workload& w, size_t configs, int* runs) {
    TrialOptions options;
    options.seed = rng_();
    return Annotate(CheckAllImplementations(registry_, w, target_, options, configs, rng_, runs), w.ToString());
  }
  const Registry& registry_ = Registry::Global();
  Target target_;
  std::mt19937_64 rng_;
};

TEST_P(Conv2dTest, RandomisedSweepOfShapesStridesPaddingsDilationsGroupsAndLayouts) {
  int runs = 0;
  const char* ops[] = {"conv2d", "conv2d_bias_act", "conv2d_backward"};
  const char* acts[] = {"identity", "relu", "sigmoid", "tanh"};
  for (int trial = 0; trial < 36; ++trial) {
    const Shape s = RandomShape(rng_);
    const std::string op = ops[trial % 3];
    const std::string extra = op == "conv2d_bias_act" ? fmt::format(" act={}", acts[trial / 3 % 4]) : "";
    OPSCHED_ASSERT_OK(CheckLine(s.Line(op, "f32", extra), 4, &runs));
  }
  std::printf("%d checked runs\n", runs);
  EXPECT_GT(runs, 36);
}

TEST_P(Conv2dTest, MathModesAndHalfTypes) {
  int runs = 0;
  Shape s{2, 6, 9, 7, 5, 3, 3};
  s.pad_h = s.pad_w = 1;
  for (const char* op : {"conv2d", "conv2d_bias_act", "conv2d_backward"}) {
    const std::string act = std::string(op) == "conv2d_bias_act" ? " act=relu" : "";
    OPSCHED_ASSERT_OK(CheckLine(s.Line(op, "f32", " math=tf32" + act), 4, &runs));
    OPSCHED_ASSERT_OK(CheckLine(s.Line(op, "f16", act), 4, &runs));
    OPSCHED_ASSERT_OK(CheckLine(s.Line(op, "bf16", act), 4, &runs));
    s.nhwc = !s.nhwc;
  }
  EXPECT_GE(runs, 9);
}

TEST_P(Conv2dTest, FewChannelsAndResNetLikeShapes) {
  int runs = 0;
  // The MNIST net's first layers (batch cut down) and small ResNet-like blocks: 1x1,
  // 3x3 and a strided 7x7 stem, NCHW and NHWC.
  for (const Shape& s : {
           Shape{4, 1, 28, 28, 16, 3, 3, 1, 1, 1, 1},
           Shape{2, 16, 14, 14, 32, 3, 3, 1, 1, 1, 1},
           Shape{2, 32, 7, 7, 16, 1, 1},
           Shape{1, 3, 20, 20, 8, 7, 7, 2, 2, 3, 3},
           Shape{2, 8, 9, 9, 8, 3, 3, 1, 1, 1, 1, 1, 1, 8},  // depthwise
       }) {
    for (bool nhwc : {false, true}) {
      Shape v = s;
      v.nhwc = nhwc;
      OPSCHED_ASSERT_OK(CheckLine(v.Line("conv2d", "f32"), 6, &runs));
      OPSCHED_ASSERT_OK(CheckLine(v.Line("conv2d_bias_act", "f32", " act=relu"), 6, &runs));
      OPSCHED_ASSERT_OK(CheckLine(v.Line("conv2d_backward", "f32"), 6, &runs));
    }
  }
  EXPECT_GT(runs, 30);
}

TEST_P(Conv2dTest, DepthwiseAndGroupedLayersInEveryDtypeAndLayout) {
  int runs = 0;
  // MobileNet/EfficientNet-like depthwise layers (3x3, 5x5 and a dilated 7x7; stride 1
  // and 2; channel counts that do and do not allow vector loads), a channel multiplier
  // of 2, and grouped layers with 2 and 4 channels per group; odd spatial sizes.
  for (const Shape& s : {
           Shape{2, 32, 15, 13, 32, 3, 3, 1, 1, 1, 1, 1, 1, 32},
           Shape{2, 24, 17, 18, 24, 3, 3, 2, 2, 1, 1, 1, 1, 24},
           Shape{1, 40, 14, 14, 40, 5, 5, 1, 1, 2, 2, 1, 1, 40},
           Shape{1, 12, 19, 11, 12, 7, 7, 2, 1, 6, 3, 2, 1, 12},
           Shape{2, 6, 9, 9, 12, 3, 3, 1, 1, 1, 1, 1, 1, 6},
           Shape{2, 16, 12, 10, 16, 3, 3, 1, 1, 1, 1, 1, 1, 8},
           Shape{1, 16, 33, 35, 8, 3, 3, 2, 2, 1, 1, 1, 1, 4},
       }) {
    for (bool nhwc : {false, true}) {
      Shape v = s;
      v.nhwc = nhwc;
      for (const char* dtype : {"f32", "f16", "bf16"}) {
        OPSCHED_ASSERT_OK(CheckLine(v.Line("conv2d", dtype), 4, &runs));
        OPSCHED_ASSERT_OK(CheckLine(v.Line("conv2d_bias_act", dtype, " act=relu"), 4, &runs));
      }
    }
  }
  EXPECT_GT(runs, 80);
}

TEST_P(Conv2dTest, EveryDepthwiseConfigOfTheLargestUnrolledFilterLaunches) {
  // The heaviest unrolled kernels (7x7, runs of 8 pixels) in their largest blocks: every
  // config of the depthwise implementations' spaces, nchw (3 channels in one group) and
  // nhwc (16-byte channel vectors, f32 and f16).
  if (GetParam() == DeviceKind::kCpu) GTEST_SKIP() << "the depthwise kernels run on the GPU only";
  int runs = 0;
  Shape nchw{1, 3, 20, 20, 8, 7, 7, 2, 2, 3, 3};
  Shape nhwc{1, 16, 15, 17, 16, 7, 7, 1, 1, 3, 3, 1, 1, 16};
  nhwc.nhwc = true;
  for (const std::string& line : {nchw.Line("conv2d", "f32"), nhwc.Line("conv2d", "f32"), nhwc.Line("conv2d", "f16"),
                                  nhwc.Line("conv2d_bias_act", "f16", " act=tanh")}) {
    OPSCHED_ASSERT_OK(CheckLine(line, 100000, &runs));
  }
  EXPECT_GT(runs, 60);
}

TEST_P(Conv2dTest, EveryStagedDepthwiseConfigMatchesTheReference) {
  // The staged nchw depthwise kernel in every config (strips of one or two columns; the
  // odd output widths 7 and 57 leave the last pair a column short): whole 7x7 planes, one
  // to a block (15 planes: too few to pack) and packed two to a block (2079 planes: the
  // last block partly filled), row tiles of a wide odd-width plane
  // (16-byte staging with scalar head and tail), row tiles of a wider one at stride 2
  // whose windows are staged with four loads in flight a thread, 5x5 at stride 2, 7x7 at
  // stride 1, no padding at stride 2; f32, f16 and bf16, with and without the fused
  // bias+activation. Then rows of whole 16-byte vectors, staged a vector at a time: 8x8
  // planes packed two to a block (2200 planes), row tiles of 56 columns, a 7x7 filter (3
  // columns of padding in a lead of 4), 20 columns (f32 only), a stride-2 layer of 56
  // output columns staged with four loads in flight; and at stride 2 with fewer than 32
  // output columns (24 and 16 wide, 5x5 and no padding), element by element.
  if (GetParam() == DeviceKind::kCpu) GTEST_SKIP() << "the depthwise kernels run on the GPU only";
  int runs = 0;
  for (const Shape& s : {
           Shape{3, 5, 7, 7, 5, 3, 3, 1, 1, 1, 1, 1, 1, 5},
           Shape{3, 693, 7, 7, 693, 5, 5, 1, 1, 2, 2, 1, 1, 693},
           Shape{1, 4, 56, 57, 4, 3, 3, 1, 1, 1, 1, 1, 1, 4},
           Shape{1, 2, 70, 227, 2, 3, 3, 2, 2, 1, 1, 1, 1, 2},
           Shape{2, 3, 29, 31, 3, 5, 5, 2, 2, 2, 2, 1, 1, 3},
           Shape{1, 2, 20, 20, 2, 7, 7, 1, 1, 3, 3, 1, 1, 2},
           Shape{1, 6, 9, 9, 6, 3, 3, 2, 2, 0, 0, 1, 1, 6},
           Shape{2, 1100, 8, 8, 1100, 3, 3, 1, 1, 1, 1, 1, 1, 1100},
           Shape{1, 3, 40, 56, 3, 3, 3, 1, 1, 1, 1, 1, 1, 3},
           Shape{1, 2, 30, 24, 2, 5, 5, 2, 2, 2, 2, 1, 1, 2},
           Shape{1, 2, 20, 32, 2, 7, 7, 1, 1, 3, 3, 1, 1, 2},
           Shape{1, 3, 21, 20, 3, 3, 3, 1, 1, 1, 1, 1, 1, 3},
           Shape{1, 6, 16, 16, 6, 3, 3, 2, 2, 0, 0, 1, 1, 6},
           Shape{1, 2, 150, 112, 2, 3, 3, 2, 2, 1, 1, 1, 1, 2},
       }) {
    OPSCHED_ASSERT_OK(CheckEveryDtype("conv2d_cuda_depthwise_staged", s, 100, &runs));
  }
  EXPECT_GT(runs, 72 * 80);
}

TEST_P(Conv2dTest, EveryNhwcStagedDepthwiseConfigMatchesTheReference) {
  // The staged nhwc depthwise kernel in sampled configs: two channel blocks of 16-byte
  // staging, a channel tail inside a block (40), channel counts that allow no 16-byte
  // vector in some dtypes (5, 36: scalar staging), one tile covering a small image, 5x5
  // and 7x7 at stride 2 and 1, no padding at stride 2, and tiles clipped at odd edges; f32,
  // f16 and bf16, with and without the fused bias+activation; channel blocks of 32 and of
  // 16 (48: three whole ones; 40 and 33: a partial last one).
  if (GetParam() == DeviceKind::kCpu) GTEST_SKIP() << "the depthwise kernels run on the GPU only";
  int runs = 0;
  for (Shape s : {
           Shape{2, 64, 15, 13, 64, 3, 3, 1, 1, 1, 1, 1, 1, 64},
           Shape{2, 48, 17, 16, 48, 3, 3, 1, 1, 1, 1, 1, 1, 48},
           Shape{1, 40, 14, 14, 40, 5, 5, 2, 2, 2, 2, 1, 1, 40},
           Shape{3, 5, 7, 7, 5, 3, 3, 1, 1, 1, 1, 1, 1, 5},
           Shape{1, 36, 20, 21, 36, 7, 7, 1, 1, 3, 3, 1, 1, 36},
           Shape{2, 33, 9, 9, 33, 3, 3, 2, 2, 0, 0, 1, 1, 33},
           Shape{1, 8, 37, 35, 8, 7, 7, 2, 2, 3, 3, 1, 1, 8},
       }) {
    s.nhwc = true;
    OPSCHED_ASSERT_OK(CheckEveryDtype("conv2d_cuda_depthwise_staged_nhwc", s, 40, &runs));
  }
  EXPECT_GT(runs, 42 * 40);
  // x with strided channels (every other channel of a wider buffer) and a padded pixel
  // pitch: the scalar staging path with x's own strides.
  Workload w = Canonical(Shape{2, 24, 9, 11, 24, 3, 3, 1, 1, 1, 1, 1, 1, 24, true}.Line("conv2d", "f16"));
  w.SetTensor("x", *TensorDesc::Strided(DType::kF16, {2, 9, 11, 24}, {9 * 11 * 56, 11 * 56, 56, 2}));
  OPSCHED_ASSERT_OK(registry_.Canonicalize(&w));
  const Implementation* staged = registry_.FindImplementation("conv2d_cuda_depthwise_staged_nhwc");
  OPSCHED_ASSERT_OK(staged->Applicable(w, target_));
  OPSCHED_ASSERT_OK(CheckWorkload(w, 40, &runs));
}

TEST_P(Conv2dTest, NhwcStagedDepthwiseTilesOfWholeTileExtentsMatchTheReference) {
  // Tile extents that are not powers of two (the space's whole-tile extents: 7, 14 and 28
  // of a 28 x 14 map, 17 of a 17-row one, 5 of a 15-column one): odd tiles with strips of
  // 2 columns (the last one half outside the tile), 14-row tiles in strips of 2 rows,
  // stride 2, 5x5; a partial last channel block (36 channels in 32s), 36 channels of
  // 16-bit elements staged element by element (no 16-byte vectors), and a 7x7 filter.
  // The staging steps each thread's window row and column: blocks of 128 to 512 threads
  // over windows 15 to 30 pixels wide. Every dtype, with and without the fused
  // bias+activation. (17 x 15 tiles of the 5x5 layer at stride 2 are not in its f32
  // space: their window needs 83 KiB.)
  if (GetParam() == DeviceKind::kCpu) GTEST_SKIP() << "the depthwise kernels run on the GPU only";
  const Implementation* staged = registry_.FindImplementation("conv2d_cuda_depthwise_staged_nhwc");
  ASSERT_NE(staged, nullptr);
  struct Case {
    Shape shape;
    std::vector<const char*> configs;
  };
  int runs = 0;
  for (Case c : {
           Case{Shape{2, 48, 28, 14, 48, 3, 3, 1, 1, 1, 1, 1, 1, 48},
                {"block=128,channels=16,columns=14,rows=28,rows_per_thread=4",
                 "block=128,channels=16,columns=7,rows=14,rows_per_thread=2",
                 "block=256,channels=32,columns=7,rows=7,rows_per_thread=1",
                 "block=512,channels=32,columns=14,rows=14,rows_per_thread=2",
                 "block=128,channels=16,columns=14,rows=7,rows_per_thread=1",
                 "block=256,channels=16,columns=7,rows=28,rows_per_thread=4"}},
           Case{Shape{1, 40, 34, 30, 40, 5, 5, 2, 2, 2, 2, 1, 1, 40}, {"block=128,channels=16,columns=5,rows=17,rows_per_thread=1",
                                                                       "block=256,channels=16,columns=15,rows=4,rows_per_thread=4"}},
           Case{Shape{3, 36, 20, 21, 36, 3, 3, 1, 1, 1, 1, 1, 1, 36}, {"block=128,channels=32,columns=8,rows=4,rows_per_thread=4",
                                                                       "block=512,channels=16,columns=7,rows=10,rows_per_thread=2"}},
           Case{Shape{2, 16, 11, 13, 16, 7, 7, 1, 1, 3, 3, 1, 1, 16}, {"block=256,channels=16,columns=4,rows=4,rows_per_thread=2"}},
       }) {
    c.shape.nhwc = true;
    for (const char* dtype : {"f32", "f16", "bf16"}) {
      for (const std::string& line : {c.shape.Line("conv2d", dtype), c.shape.Line("conv2d_bias_act", dtype, " act=relu")}) {
        const Workload w = Canonical(line);
        TrialOptions options;
        options.seed = rng_();
        StatusOr<std::unique_ptr<Trial>> trial = Trial::Create(registry_, w, target_, options);
        ASSERT_TRUE(trial.ok()) << trial.status();
        std::vector<Config> configs;
        for (const char* text : c.configs) {
          StatusOr<Config> config = ParseConfig(text);
          ASSERT_TRUE(config.ok()) << config.status();
          ASSERT_TRUE(staged->Space(w, target_).Contains(*config)) << line << " " << text;
          configs.push_back(*std::move(config));
        }
        OPSCHED_ASSERT_OK(CheckConfigs(**trial, *staged, configs, false, &runs));
      }
    }
  }
  EXPECT_EQ(runs, 11 * 6);
}

TEST_P(Conv2dTest, EveryGroupedConfigOfSeveralFiltersAThreadMatchesTheReference) {
  // The grouped kernel (conv2d_cuda_grouped.cu: `filters` 2, 4 or 8 of a group a thread)
  // in every config of its part of the space: ResNeXt-like groups of 4 channels and 4
  // filters, 8 channels and 16 filters at stride 2 (two sets of 8 a group), 4 channels
  // and 8 filters with no padding, 2 and 2 at stride 2 with odd sizes, 16 and 16 on a
  // 40x100 map, and a strided (non-contiguous) x; f32, f16 and bf16, with and without the
  // fused bias+activation. Runs of 1 to 8 pixels leave partial last runs on widths 13, 9,
  // 7 and 5.
  if (GetParam() == DeviceKind::kCpu) GTEST_SKIP() << "the grouped kernel runs on the GPU only";
  const Implementation* impl = registry_.FindImplementation("conv2d_cuda_depthwise");
  const Implementation* fused = registry_.FindImplementation("conv2d_bias_act_cuda_depthwise");
  ASSERT_NE(impl, nullptr);
  ASSERT_NE(fused, nullptr);
  int runs = 0, configs_seen = 0;
  auto check = [&](const Workload& w, const Implementation& with) {
    TrialOptions options;
    options.seed = rng_();
    StatusOr<std::unique_ptr<Trial>> trial = Trial::Create(registry_, w, target_, options);
    ASSERT_TRUE(trial.ok()) << trial.status();
    std::vector<Config> configs;
    for (Config& c : with.Space(w, target_).Enumerate(100000)) {
      StatusOr<int64_t> filters = c.GetInt("filters");
      if (filters.ok() && *filters > 1) configs.push_back(std::move(c));
    }
    ASSERT_FALSE(configs.empty()) << w.ToString();
    configs_seen += static_cast<int>(configs.size());
    OPSCHED_ASSERT_OK(CheckConfigs(**trial, with, configs, false, &runs));
  };
  for (const Shape& s : {
           Shape{2, 16, 11, 13, 16, 3, 3, 1, 1, 1, 1, 1, 1, 4},
           Shape{1, 32, 15, 17, 64, 3, 3, 2, 2, 1, 1, 1, 1, 4},
           Shape{2, 12, 9, 9, 24, 3, 3, 1, 1, 0, 0, 1, 1, 3},
           Shape{1, 8, 10, 11, 8, 3, 3, 2, 2, 0, 0, 1, 1, 4},
           Shape{1, 32, 40, 100, 32, 3, 3, 1, 1, 1, 1, 1, 1, 2},
       }) {
    for (const char* dtype : {"f32", "f16", "bf16"}) {
      check(Canonical(s.Line("conv2d", dtype)), *impl);
      check(Canonical(s.Line("conv2d_bias_act", dtype, " act=relu")), *fused);
    }
  }
  // x a view of every other channel of a wider tensor.
  Workload strided = Canonical(Shape{2, 16, 7, 9, 16, 3, 3, 1, 1, 1, 1, 1, 1, 4}.Line("conv2d", "f16"));
  strided.SetTensor("x", *TensorDesc::Strided(DType::kF16, {2, 16, 7, 9}, {32 * 63, 2 * 63, 9, 1}));
  OPSCHED_ASSERT_OK(registry_.Canonicalize(&strided));
  check(strided, *impl);
  std::printf("%d grouped configs, %d checked runs\n", configs_seen, runs);
  EXPECT_EQ(runs, configs_seen);
  EXPECT_GT(configs_seen, 700);
}

TEST_P(Conv2dTest, EmptyBatchAndSingleElement) {
  int runs = 0;
  for (const char* op : {"conv2d", "conv2d_bias_act", "conv2d_backward"}) {
    OPSCHED_ASSERT_OK(CheckLine(Shape{0, 3, 5, 5, 2, 3, 3}.Line(op, "f32"), 3, &runs));  // no images: dw is 0
    OPSCHED_ASSERT_OK(CheckLine(Shape{1, 1, 1, 1, 1, 1, 1}.Line(op, "f32"), 3, &runs));
    Shape odd{1, 1, 1, 1, 1, 3, 3};  // one pixel, a 3x3 window over its padding
    odd.pad_h = odd.pad_w = 1;
    OPSCHED_ASSERT_OK(CheckLine(odd.Line(op, "f32"), 3, &runs));
  }
  EXPECT_GT(runs, 9);
}

TEST_P(Conv2dTest, NonContiguousInputs) {
  int runs = 0;
  // x [2,3,6,5] NCHW read from NHWC storage, w [4,3,3,3] read from a [4,3,3,3]-in-KRSC
  // buffer, dy as every other element of a wider buffer.
  const Dims x_strides = {90, 1, 15, 3};
  const Dims w_strides = {27, 1, 9, 3};
  for (const char* op : {"conv2d", "conv2d_bias_act", "conv2d_backward"}) {
    Workload w{std::string(op)};
    w.SetTensor("x", *TensorDesc::Strided(DType::kF32, {2, 3, 6, 5}, x_strides));
    w.SetTensor("w", *TensorDesc::Strided(DType::kF32, {4, 3, 3, 3}, w_strides));
    if (std::string(op) == "conv2d_bias_act") w.SetTensor("b", *TensorDesc::Strided(DType::kF32, {4}, {3}));
    if (std::string(op) == "conv2d_backward") {
      w.SetTensor("dy", *TensorDesc::Strided(DType::kF32, {2, 4, 6, 5}, {240, 60, 10, 2}));
    }
    w.SetAttr("pad", Dims{1, 1});
    OPSCHED_ASSERT_OK(registry_.Canonicalize(&w));
    OPSCHED_ASSERT_OK(CheckWorkload(w, 4, &runs));
  }
  EXPECT_GE(runs, 3);
}

TEST_P(Conv2dTest, RuntimeServesConv2dBiasActivationAndBackward) {
  RuntimeOptions o;
  o.target = target_;
  auto rt = Runtime::Create(o);
  ASSERT_TRUE(rt.ok()) << rt.status();
  Runtime& runtime = **rt;
  Conv2dParams params;
  params.stride[0] = 2;
  params.pad[0] = params.pad[1] = 1;
  params.groups = 2;
  Shape s{3, 4, 11, 8, 6, 3, 3, 2, 1, 1, 1, 1, 1, 2};
  OPSCHED_ASSERT_OK(CheckRuntimeCall(registry_, target_, Canonical(s.Line("conv2d", "f32")),
                   [&](const std::vector<Tensor>& t, const Stream& st) {
                     return runtime.Conv2d(t[0], t[1], t[2], params, st);
                   }));
  OPSCHED_ASSERT_OK(CheckRuntimeCall(registry_, target_, Canonical(s.Line("conv2d_bias_act", "f32", " act=tanh")),
                   [&](const std::vector<Tensor>& t, const Stream& st) {
                     return runtime.Conv2dBiasActivation(t[0], t[1], t[2], t[3], params, Activation::kTanh, st);
                   }));
  OPSCHED_ASSERT_OK(CheckRuntimeCall(registry_, target_, Canonical(s.Line("conv2d_backward", "f32")),
                   [&](const std::vector<Tensor>& t, const Stream& st) {
                     return runtime.Conv2dBackward(t[0], t[1], t[2], t[3], t[4], nullptr, params, st);
                   }));
  // NHWC, and the bias gradient through the reduce family.
  Conv2dParams nhwc;
  nhwc.layout = ConvLayout::kNhwc;
  Shape v{2, 3, 6, 6, 5, 1, 1};
  v.nhwc = true;
  auto trial = Trial::Create(registry_, Canonical(v.Line("conv2d_backward", "f32")), target_, TrialOptions{});
  ASSERT_TRUE(trial.ok());
  const std::vector<Tensor>& t = (*trial)->tensors();
  Buffer db_buffer;
  auto db_or = Buffer::Allocate(t[0].device, 5 * sizeof(float));
  ASSERT_TRUE(db_or.ok());
  db_buffer = *std::move(db_or);
  Tensor db{TensorDesc::Contiguous(DType::kF32, {5}), db_buffer.data(), t[0].device};
  OPSCHED_ASSERT_OK(runtime.Conv2dBackward(t[0], t[1], t[2], t[3], t[4], &db, nhwc, (*trial)->stream()));
  float got[5];
  if (t[0].device.is_cpu()) {
    std::memcpy(got, db.data, sizeof got);
  } else {
    OPSCHED_ASSERT_OK(gpu::MemcpyAsync(got, db.data, sizeof got, (*trial)->stream().native()));
    OPSCHED_ASSERT_OK(gpu::StreamSynchronize((*trial)->stream().native()));
  }
  const HostTensor& dy = (*trial)->inputs()[2];
  for (int64_t k = 0; k < 5; ++k) {
    double want = 0, magnitude = 0;
    for (int64_t i = k; i < dy.desc().numel(); i += 5) {
      want += dy.Get(i);
      magnitude += std::abs(dy.Get(i));
    }
    EXPECT_NEAR(got[k], want, 1e-6 * magnitude + 1e-7) << "db[" << k << "]";
  }
  // A y of the wrong shape: an error before any launch, naming the tensor.
  Tensor wrong = t[3];
  wrong.desc = TensorDesc::Contiguous(DType::kF32, {2, 6, 6, 4});
  Status bad = runtime.Conv2dBackward(t[0], t[1], t[2], wrong, t[4], nullptr, nhwc, (*trial)->stream());
  EXPECT_FALSE(bad.ok());
  EXPECT_NE(bad.message().find("tensor 3"), std::string::npos) << bad;
}

TEST_P(Conv2dTest, CudnnAlgorithmsAreConfigsAndTwoStreamsCostASecondWorkspace) {
  if (GetParam() == DeviceKind::kCpu) GTEST_SKIP() << "cuDNN runs on the GPU only";
  const Workload w = Canonical(Shape{4, 16, 14, 14, 16, 3, 3, 1, 1, 1, 1}.Line("conv2d_backward", "f32"));
  const Implementation* impl = registry_.FindImplementation("conv2d_backward_cudnn");
  ASSERT_NE(impl, nullptr);
  OPSCHED_ASSERT_OK(impl->Applicable(w, target_));
  const ConfigSpace space = impl->Space(w, target_);
  size_t one = 0, two = 0, both = 0;
  for (const Config& c : space.Enumerate()) {
    (c.GetInt("streams", 1) == 2 ? two : one) += 1;
    Config single = c;
    single.Set("streams", 1);
    if (c.GetInt("streams", 1) == 2 && space.Contains(single)) {
      ++both;
      EXPECT_GE(impl->WorkspaceBytes(w, c), impl->WorkspaceBytes(w, single)) << c.ToString();
    }
  }
  EXPECT_GT(one, 1u);
  EXPECT_EQ(one, two);
  EXPECT_EQ(both, two);
  const Implementation* forward = registry_.FindImplementation("conv2d_cudnn");
  ASSERT_NE(forward, nullptr);
  const Workload f = Canonical(Shape{4, 16, 14, 14, 16, 3, 3, 1, 1, 1, 1}.Line("conv2d", "f32"));
  EXPECT_GT(forward->Space(f, target_).Enumerate().size(), 2u) << "cuDNN forward algorithms as configs";
  // Every config of every space (each cuDNN algorithm and graph engine, both stream
  // counts) against the reference, for one forward, one fused and one backward shape.
  int runs = 0;
  for (const Workload& full : {f, w, Canonical(Shape{4, 16, 14, 14, 16, 3, 3, 1, 1, 1, 1}.Line("conv2d_bias_act", "f32",
                                                                                                    " act=relu"))}) {
    OPSCHED_ASSERT_OK(CheckWorkload(full, 100000, &runs));
  }
  std::printf("%d checked runs over full spaces\n", runs);
  EXPECT_GT(runs, 50);
}

// cuDNN calls repeat through one Prepared with the same tensors: the first runs directly,
// the second is captured into a CUDA graph that later calls replay
// (extern/cudnn/replayed_prepared.h). Every call gets new input values, which the
// replayed graph must read, and new output poison, which it must overwrite.
TEST_P(Conv2dTest, ReplayedCudnnCallsReadTheirTensorsAnew) {
  if (GetParam() == DeviceKind::kCpu) GTEST_SKIP() << "cuDNN runs on the GPU only";
  const Shape shape{3, 8, 9, 11, 16, 3, 3, 1, 1, 1, 1};
  const std::pair<std::string, std::string> cases[] = {
      {shape.Line("conv2d", "f32"), "conv2d_cudnn"},
      {shape.Line("conv2d_bias_act", "f32", " act=relu"), "conv2d_bias_act_cudnn"},
      {shape.Line("conv2d", "f32"), "conv2d_cudnn_graph"},
      {shape.Line("conv2d_backward", "f32"), "conv2d_backward_cudnn"},
      {shape.Line("conv2d_backward", "f32"), "conv2d_backward_cudnn_graph"},
  };
  std::mt19937_64 rng(11);
  std::uniform_real_distribution<double> value(-1, 1);
  int runs = 0;
  for (const auto& [line, name] : cases) {
    const Workload w = Canonical(line);
    const Implementation* impl = registry_.FindImplementation(name);
    ASSERT_NE(impl, nullptr) << name;
    OPSCHED_ASSERT_OK(impl->Applicable(w, target_));
    for (const Config& config : impl->Space(w, target_).Enumerate()) {
      if (config.GetInt("streams", 1) == 1 && name.find("backward") != std::string::npos) continue;  // 2 streams
      auto trial = Trial::Create(registry_, w, target_, TrialOptions{.seed = 5});
      ASSERT_TRUE(trial.ok()) << trial.status();
      for (int call = 0; call < 4; ++call) {
        for (HostTensor& x : (*trial)->inputs()) {
          for (int64_t i = 0; i < x.desc().numel(); ++i) x.Set(i, value(rng));
        }
        OPSCHED_ASSERT_OK((*trial)->Upload());
        OPSCHED_ASSERT_OK((*trial)->Run(*impl, config));
        OPSCHED_ASSERT_OK((*trial)->Check(*impl));
        ++runs;
      }
      break;  // one config each: the first with two streams for the backward ones
    }
  }
  EXPECT_EQ(runs, 5 * 4);
}

// The untuned floor on the GPU: the rules strategies/conv2d_strategy.cc documents, from
// the H100 records, and cuDNN's heuristic fused where the fused call takes its algorithm.
TEST_P(Conv2dTest, StrategyRulesAndTheVendorFloorOnTheGpu) {
  if (GetParam() == DeviceKind::kCpu) GTEST_SKIP() << "the rules and cuDNN's heuristic choose GPU implementations";
  Dispatcher dispatcher(registry_, target_, nullptr, DispatchOptions{.use_model = false});
  auto rule = [&](const std::string& line) {
    StatusOr<Decision> d = dispatcher.Heuristic(Canonical(line));
    EXPECT_TRUE(d.ok()) << line << ": " << d.status();
    return d.ok() ? fmt::format("{} {}", d->implementation->name(), d->config.ToString()) : std::string();
  };
  const std::string dense = " stride=1,1 pad=1,1 dilation=1,1 groups=1 layout=nchw math=fp32";
  // 1x1: one GEMM over all images (here 16).
  EXPECT_EQ(rule("conv2d x=f32[16,64,56,56] w=f32[256,64,1,1] stride=1,1 pad=0,0 dilation=1,1 groups=1 layout=nchw "
                 "math=fp32"),
            "conv2d_cuda_im2col_gemm images=16");
  // One image, a deep reduction: one GEMM per image; the same layer at batch 32: Winograd.
  EXPECT_EQ(rule("conv2d x=f32[1,256,14,14] w=f32[256,256,3,3]" + dense), "conv2d_cuda_im2col_gemm images=1");
  EXPECT_EQ(rule("conv2d x=f32[32,256,14,14] w=f32[256,256,3,3]" + dense), "conv2d_cudnn algo=winograd_nonfused");
  // Winograd neither in bf16 nor on large outputs at small batch.
  EXPECT_EQ(rule("conv2d x=bf16[64,256,14,14] w=bf16[256,256,3,3]" + dense), "conv2d_cudnn algo=implicit_precomp_gemm");
  EXPECT_EQ(rule("conv2d x=f32[4,128,128,128] w=f32[128,128,3,3]" + dense), "conv2d_cudnn algo=implicit_precomp_gemm");
  // Few channels (MNIST's first layer): the direct kernel; not for depthwise layers.
  EXPECT_EQ(rule("conv2d x=f32[128,1,28,28] w=f32[16,1,3,3]" + dense).rfind("conv2d_cuda_direct ", 0), 0u);
  // Depthwise, any dtype: the staged kernel in its default config (nchw rows=64
  // rows_per_thread=4 columns_per_thread=1 block=128, or the closest that fits: 64 rows
  // of a 112-wide image at stride 2 do not; nhwc 8x16 tiles, strips of 8 rows); a
  // dilated filter: the own depthwise kernel in its default, for f16/bf16.
  const auto default_of = [&](const std::string& name, const std::string& line) {
    const Implementation* impl = registry_.FindImplementation(name);
    EXPECT_NE(impl, nullptr) << name;
    if (impl == nullptr) return std::string();
    StatusOr<Config> d = impl->DefaultConfig(Canonical(line), target_);
    EXPECT_TRUE(d.ok()) << d.status();
    return d.ok() ? name + " " + d->ToString() : std::string();
  };
  const std::string wide = "conv2d x=f32[8,96,112,112] w=f32[96,1,3,3] stride=2,2 pad=1,1 dilation=1,1 groups=96 "
                           "layout=nchw math=fp32";
  EXPECT_EQ(rule(wide), "conv2d_cuda_depthwise_staged block=128,columns_per_thread=1,rows=32,rows_per_thread=4");
  for (const char* op : {"conv2d", "conv2d_bias_act"}) {
    const std::string b = std::string(op) == "conv2d" ? "" : " b=f16[144]";
    const std::string act = std::string(op) == "conv2d" ? "" : " act=relu";
    const std::string nchw = fmt::format("{} x=f16[32,144,56,56] w=f16[144,1,3,3]{} stride=1,1 pad=1,1 dilation=1,1 "
                                         "groups=144 layout=nchw math=fp32{}", op, b, act);
    EXPECT_EQ(rule(nchw),
              fmt::format("{}_cuda_depthwise_staged block=128,columns_per_thread=1,rows=64,rows_per_thread=4", op));
    const std::string nhwc = fmt::format("{} x=f16[32,56,56,144] w=f16[144,3,3,1]{} stride=1,1 pad=1,1 dilation=1,1 "
                                         "groups=144 layout=nhwc math=fp32{}", op, b, act);
    EXPECT_EQ(rule(nhwc),
              fmt::format("{}_cuda_depthwise_staged_nhwc block=128,channels=32,columns=16,rows=8,rows_per_thread=8", op));
    const std::string dilated = fmt::format("{} x=f16[32,144,56,56] w=f16[144,1,3,3]{} stride=1,1 pad=2,2 "
                                            "dilation=2,2 groups=144 layout=nchw math=fp32{}", op, b, act);
    EXPECT_EQ(rule(dilated), default_of(fmt::format("{}_cuda_depthwise", op), dilated));
  }
  // The vendor floor of a fused bias+relu is cuDNN's heuristic algorithm in the fused call;
  // sigmoid, which the fused call refuses, takes three calls.
  const std::string shape = "x=f32[16,64,56,56] w=f32[64,64,3,3]";
  StatusOr<Decision> plain = dispatcher.Vendor(Canonical("conv2d " + shape + dense));
  ASSERT_TRUE(plain.ok()) << plain.status();
  for (const char* act : {"relu", "sigmoid"}) {
    StatusOr<Decision> fused =
        dispatcher.Vendor(Canonical(fmt::format("conv2d_bias_act {} b=f32[64]{} act={}", shape, dense, act)));
    ASSERT_TRUE(fused.ok()) << fused.status();
    EXPECT_EQ(fused->implementation->name(),
              std::string(act) == "relu" ? "conv2d_bias_act_cudnn" : "conv2d_bias_act_cudnn_unfused");
    EXPECT_EQ(fused->config, plain->config) << act;
  }
}

// Several filters of a group a thread (conv2d_cuda_grouped.cu) are in the own depthwise
// kernel's space only where they fit: direct nchw configs, `filters` dividing K/G, a 3x3
// filter at stride 1 or 2, filters * pixels <= 32; and the rules serve grouped 3x3 layers
// (ResNeXt, RegNet) with them (f32 of few filters a group, f16/bf16 of few channels) or
// with the direct kernel (f32 of 8 filters or more), not 1x1 grouped or depthwise ones
// (host checks: no device).
TEST(Conv2dGroupedTest, SeveralFiltersAThreadWhereTheyFitAndTheRuleForGroupedLayers) {
  const Implementation* impl = Registry::Global().FindImplementation("conv2d_cuda_depthwise");
  if (impl == nullptr) GTEST_SKIP() << "this build has no CUDA implementations (a CPU-only or sanitizer build)";
  const Target gpu = records::testing::TestGpu("NVIDIA H200");
  auto canonical = [](const std::string& line) {
    StatusOr<Workload> w = Registry::Global().ParseCanonical(line);
    EXPECT_TRUE(w.ok()) << line << ": " << w.status();
    return w.ok() ? *w : Workload();
  };
  // The filters values among a workload's configs; every such config direct and small.
  auto filters_of = [&](const std::string& line) {
    std::set<int64_t> values;
    for (const Config& c : impl->Space(canonical(line), gpu).Enumerate()) {
      const int64_t f = c.GetInt("filters", 1);
      values.insert(f);
      if (f > 1) {
        EXPECT_EQ(c.GetInt("rows", -1), 0) << c.ToString();
        EXPECT_LE(f * c.GetInt("pixels", 99), 32) << c.ToString();
      }
    }
    return values;
  };
  const std::string tail = " dilation=1,1 layout=nchw math=fp32";
  EXPECT_EQ(filters_of("conv2d x=bf16[32,128,28,28] w=bf16[128,4,3,3] stride=1,1 pad=1,1 groups=32" + tail),
            (std::set<int64_t>{1, 2, 4}));
  EXPECT_EQ(filters_of("conv2d x=f32[8,512,28,28] w=f32[512,16,3,3] stride=2,2 pad=1,1 groups=32" + tail),
            (std::set<int64_t>{1, 2, 4, 8}));
  EXPECT_EQ(filters_of("conv2d x=f32[8,12,28,28] w=f32[6,4,3,3] stride=1,1 pad=1,1 groups=3" + tail),
            (std::set<int64_t>{1, 2}));
  EXPECT_EQ(filters_of("conv2d x=f32[8,12,28,28] w=f32[9,4,3,3] stride=1,1 pad=1,1 groups=3" + tail),
            (std::set<int64_t>{1}));  // 3 filters a group
  EXPECT_EQ(filters_of("conv2d x=f32[8,64,28,28] w=f32[64,4,5,5] stride=1,1 pad=2,2 groups=16" + tail),
            (std::set<int64_t>{1}));  // 5x5
  EXPECT_EQ(filters_of("conv2d x=f32[8,64,28,28] w=f32[64,4,3,3] stride=3,3 pad=1,1 groups=16" + tail),
            (std::set<int64_t>{1}));  // stride 3
  EXPECT_EQ(filters_of("conv2d x=f32[8,64,28,28] w=f32[64,4,3,3] stride=1,1 pad=2,2 dilation=2,2 groups=16 "
                       "layout=nchw math=fp32"),
            (std::set<int64_t>{1}));  // dilated
  EXPECT_EQ(filters_of("conv2d x=f32[8,28,28,64] w=f32[64,3,3,4] stride=1,1 pad=1,1 dilation=1,1 groups=16 "
                       "layout=nhwc math=fp32"),
            (std::set<int64_t>{1}));  // nhwc declares no filters knob
  Dispatcher dispatcher(Registry::Global(), gpu, nullptr, DispatchOptions{.use_model = false});
  auto rule = [&](const std::string& line) {
    StatusOr<Decision> d = dispatcher.Heuristic(canonical(line));
    EXPECT_TRUE(d.ok()) << line << ": " << d.status();
    return d.ok() ? fmt::format("{} {}", d->implementation->name(), d->config.ToString()) : std::string();
  };
  EXPECT_EQ(rule("conv2d x=bf16[32,128,28,28] w=bf16[128,4,3,3] stride=1,1 pad=1,1 groups=32" + tail),
            "conv2d_cuda_depthwise block=256,columns=32,filters=4,pixels=4,rows=0");
  EXPECT_EQ(rule("conv2d_bias_act x=f16[8,56,7,7] w=f16[56,4,3,3] b=f16[56] stride=1,1 pad=1,1 groups=14" + tail +
                 " act=relu"),
            "conv2d_bias_act_cuda_depthwise block=256,columns=8,filters=4,pixels=4,rows=0");
  // f32 with 8 or more filters a group: the direct kernel, 8 filters a thread.
  EXPECT_EQ(rule("conv2d x=f32[8,512,28,28] w=f32[512,16,3,3] stride=2,2 pad=1,1 groups=32" + tail),
            "conv2d_cuda_direct block=256,channels_per_thread=8");
  EXPECT_EQ(rule("conv2d_bias_act x=f32[8,56,7,7] w=f32[56,8,3,3] b=f32[56] stride=1,1 pad=1,1 groups=7" + tail +
                 " act=relu"),
            "conv2d_bias_act_cuda_direct block=256,channels_per_thread=8");
  EXPECT_EQ(rule("conv2d x=f32[8,12,28,28] w=f32[6,4,3,3] stride=1,1 pad=1,1 groups=3" + tail),
            "conv2d_cuda_depthwise block=256,columns=32,filters=2,pixels=4,rows=0");
  // Not grouped 3x3 with an even K/G (or C/G above 16), or 16-bit with 8 or more channels
  // a group (cuDNN's tensor cores): other rules, or none without the device's libraries.
  auto served = [&](const std::string& line) {
    StatusOr<Decision> d = dispatcher.Heuristic(canonical(line));
    return d.ok() ? fmt::format("{} {}", d->implementation->name(), d->config.ToString()) : d.status().ToString();
  };
  for (const std::string& line : {
           "conv2d x=f32[8,512,28,28] w=f32[512,16,1,1] stride=1,1 pad=0,0 groups=32" + tail,
           "conv2d x=f32[8,12,28,28] w=f32[9,4,3,3] stride=1,1 pad=1,1 groups=3" + tail,
           "conv2d x=f32[8,64,28,28] w=f32[64,1,3,3] stride=1,1 pad=1,1 groups=64" + tail,
           "conv2d x=f32[8,1024,7,7] w=f32[1024,32,3,3] stride=1,1 pad=1,1 groups=32" + tail,
           "conv2d x=bf16[16,512,14,14] w=bf16[512,16,3,3] stride=1,1 pad=1,1 groups=32" + tail,
           "conv2d x=f16[8,256,28,28] w=f16[256,8,3,3] stride=1,1 pad=1,1 groups=32" + tail,
       }) {
    const std::string d = served(line);
    for (const char* grouped : {"filters=2", "filters=4", "filters=8", "_cuda_direct "}) {
      EXPECT_EQ(d.find(grouped), std::string::npos) << line << ": " << d;
    }
  }
}

TEST(Conv2dWorkloadTest, CanonicalFormAndValidationErrors) {
  StatusOr<Workload> w = Registry::Global().ParseCanonical("conv2d x=f32[32,64,56,56] w=f32[64,64,3,3] pad=1");
  ASSERT_TRUE(w.ok()) << w.status();
  EXPECT_EQ(w->ToString(),
            "conv2d x=f32[32,64,56,56] w=f32[64,64,3,3] stride=1,1 pad=1,1 dilation=1,1 groups=1 layout=nchw "
            "math=fp32");
  w = Registry::Global().ParseCanonical(
      "conv2d_bias_act x=f32[128,28,28,1] w=f32[16,3,3,1] b=f32[16] act=relu pad=1,1 layout=nhwc");
  ASSERT_TRUE(w.ok()) << w.status();
  EXPECT_EQ(w->ToString(),
            "conv2d_bias_act x=f32[128,28,28,1] w=f32[16,3,3,1] b=f32[16] stride=1,1 pad=1,1 dilation=1,1 groups=1 "
            "layout=nhwc math=fp32 act=relu");
  EXPECT_EQ(conv2d::MakeProblem(*w).p, 28);
  struct Bad {
    const char* line;
    const char* message;
  };
  for (const Bad& bad : {
           Bad{"conv2d x=f32[1,4,8,8]", "needs tensors x, w"},
           Bad{"conv2d x=f32[1,4,8,8] w=f32[2,3,3,3]", "w f32[2,3,3,3] has 3 input channels per filter"},
           Bad{"conv2d x=f32[1,4,8,8] w=f32[3,2,3,3] groups=2", "groups=2 must divide the 4 input channels and the 3"},
           Bad{"conv2d x=f32[1,4,2,2] w=f32[2,4,3,3]", "the 3x3 filter (dilation 1,1) does not fit the 2x2 input"},
           Bad{"conv2d x=f16[1,4,8,8] w=f32[2,4,3,3]", "w is f32 but x is f16"},
           Bad{"conv2d x=i32[1,4,8,8] w=i32[2,4,3,3]", "x is i32, expected f32, f16 or bf16"},
           Bad{"conv2d x=f32[1,4,8,8] w=f32[2,4,3,3] stride=0", "stride 0 must be at least 1"},
           Bad{"conv2d x=f32[1,4,8,8] w=f32[2,4,3,3] pad=1,2,3", "pad takes one or two values"},
           Bad{"conv2d x=f32[1,4,8,8] w=f32[2,4,3,3] layout=chwn", "unknown layout 'chwn'"},
           Bad{"conv2d x=f16[1,4,8,8] w=f16[2,4,3,3] math=tf32", "math=tf32 applies to f32 tensors"},
           Bad{"conv2d x=f32[1,4,8,8] w=f32[2,4,3,3] act=relu", "unknown attribute 'act'"},
           Bad{"conv2d_bias_act x=f32[1,4,8,8] w=f32[2,4,3,3] b=f32[3]", "b is f32[3], expected [2]"},
           Bad{"conv2d_bias_act x=f32[1,4,8,8] w=f32[2,4,3,3] b=f32[2] act=gelu", "unknown act 'gelu'"},
           Bad{"conv2d_backward x=f32[1,4,8,8] w=f32[2,4,3,3] dy=f32[1,2,8,8]", "dy is f32[1,2,8,8], expected [1,2,6,6]"},
           Bad{"conv2d x=f32[4,8,8] w=f32[2,4,3,3]", "x is f32[4,8,8], expected rank 4"},
       }) {
    StatusOr<Workload> parsed = Registry::Global().ParseCanonical(bad.line);
    ASSERT_FALSE(parsed.ok()) << bad.line;
    EXPECT_NE(parsed.status().message().find(bad.message), std::string::npos)
        << bad.line << " gave " << parsed.status();
  }
}

TEST(Conv2dCheckTest, AWrongResultIsCaught) {
  // The check must fail an output that misses one product of one element.
  const Target cpu = CpuTarget();
  StatusOr<Workload> w = Registry::Global().ParseCanonical("conv2d x=f32[2,3,6,6] w=f32[4,3,3,3] pad=1,1");
  ASSERT_TRUE(w.ok());
  TrialOptions options;
  options.seed = 3;
  auto trial = Trial::Create(Registry::Global(), *w, cpu, options);
  ASSERT_TRUE(trial.ok());
  const Implementation* impl = Registry::Global().FindImplementation("conv2d_cpu_direct");
  ASSERT_NE(impl, nullptr);
  Config c;
  c.Set("threads", 1);
  OPSCHED_ASSERT_OK((*trial)->Run(*impl, c));
  OPSCHED_ASSERT_OK((*trial)->Check(*impl));
  auto reference = (*trial)->Reference();
  ASSERT_TRUE(reference.ok());
  std::vector<HostTensor> outputs = (*trial)->outputs();
  const HostTensor& x = (*trial)->inputs()[0];
  const HostTensor& f = (*trial)->inputs()[1];
  // y[0,0,2,2] without its x[0,0,2,2] * w[0,0,1,1] term.
  const int64_t y_index = 2 * 6 + 2, x_index = 2 * 6 + 2, w_index = 1 * 3 + 1;
  outputs[0].Set(y_index, outputs[0].Get(y_index) - x.Get(x_index) * f.Get(w_index));
  EXPECT_FALSE((*trial)->op().Check(*w, (*trial)->inputs(), outputs, **reference, true, nullptr).ok());
}

// The float64 reference's outputs for `line` with inputs set by `fill(input index, element)`.
std::vector<std::vector<double>> ReferenceOf(const std::string& line,
                                             const std::function<double(size_t, int64_t)>& fill) {
  StatusOr<Workload> w = Registry::Global().ParseCanonical(line);
  EXPECT_TRUE(w.ok()) << line << ": " << w.status();
  std::vector<HostTensor> inputs;
  for (const TensorArg& t : w->tensors()) inputs.emplace_back(t.desc);
  for (size_t i = 0; i < inputs.size(); ++i) {
    for (int64_t e = 0; e < inputs[i].desc().numel(); ++e) inputs[i].Set(e, fill(i, e));
  }
  StatusOr<std::vector<std::vector<double>>> out =
      conv2d::ReferenceOutputs(conv2d::MakeProblem(*w), inputs, false);
  EXPECT_TRUE(out.ok());
  return *out;
}

TEST(Conv2dReferenceTest, KnownAnswersForStridePaddingDilationAndGroups) {
  // x = 0..15 in a 4x4 image, w = [[1,2],[3,4]], stride 2, pad 1: cross-correlation as
  // torch.nn.functional.conv2d computes it (worked by hand).
  std::vector<std::vector<double>> y = ReferenceOf(
      "conv2d x=f32[1,1,4,4] w=f32[1,1,2,2] stride=2 pad=1",
      [](size_t i, int64_t e) { return i == 0 ? double(e) : double(e + 1); });
  EXPECT_EQ(y[0], (std::vector<double>{0, 11, 9, 40, 84, 40, 24, 41, 15}));
  // Dilation 2 over a 3x3 image, 2 groups of one channel: filter k reads channel k.
  y = ReferenceOf("conv2d x=f32[1,2,3,3] w=f32[2,1,2,2] dilation=2 groups=2", [](size_t i, int64_t e) {
    if (i == 0) return e < 9 ? double(e) : double(e + 1);  // channel 0: 0..8, channel 1: 10..18
    const double w[8] = {1, 1, 1, 1, 1, -1, 0, 2};
    return w[e];
  });
  EXPECT_EQ(y[0], (std::vector<double>{0 + 2 + 6 + 8, 10 - 12 + 0 + 2 * 18}));
  // Bias then activation: relu(conv + b) with the conv above's first filter.
  y = ReferenceOf("conv2d_bias_act x=f32[1,1,3,3] w=f32[2,1,2,2] b=f32[2] dilation=2 act=relu",
                  [](size_t i, int64_t e) {
                    if (i == 0) return double(e);
                    if (i == 1) return e < 4 ? 1.0 : -1.0;
                    return e == 0 ? 0.5 : 3.0;
                  });
  EXPECT_EQ(y[0], (std::vector<double>{16.5, 0.0}));  // 16 + 0.5, relu(-16 + 3)
}

TEST(Conv2dReferenceTest, BackwardIsTheAdjointOfForward) {
  // For y = conv(x, w): <dy, y> = <dx, x> = <dw, w> whatever dy is. This ties the
  // backward loops to the forward ones, stride, padding, dilation and groups included.
  std::mt19937_64 rng(7);
  std::uniform_real_distribution<double> value(-1, 1);
  for (int trial = 0; trial < 20; ++trial) {
    const Shape s = RandomShape(rng);
    std::vector<std::vector<double>> data(3);
    auto fill = [&](size_t i, int64_t e) {
      if (data[i].size() <= static_cast<size_t>(e)) data[i].resize(e + 1);
      return data[i][e] = static_cast<float>(value(rng));  // f32 tensors hold f32 values
    };
    const std::vector<std::vector<double>> back = ReferenceOf(s.Line("conv2d_backward", "f32"), fill);
    const std::vector<double> x = data[0], w = data[1], dy = data[2];
    const std::vector<std::vector<double>> y =
        ReferenceOf(s.Line("conv2d", "f32"), [&](size_t i, int64_t e) { return i == 0 ? x[e] : w[e]; });
    auto dot = [](const std::vector<double>& a, const std::vector<double>& b) {
      double sum = 0;
      for (size_t i = 0; i < a.size(); ++i) sum += a[i] * b[i];
      return sum;
    };
    const double forward = dot(dy, y[0]);
    const std::string where = s.Line("conv2d_backward", "f32");
    EXPECT_NEAR(dot(back[0], x), forward, 1e-9 * (1 + std::abs(forward))) << where;
    EXPECT_NEAR(dot(back[1], w), forward, 1e-9 * (1 + std::abs(forward))) << where;
  }
}

TEST(Conv2dReferenceTest, LayoutsAgree) {
  // The same logical tensors in NCHW and NHWC give the same logical outputs.
  Shape s{2, 4, 7, 6, 6, 3, 2, 2, 1, 1, 0, 1, 2, 2};
  Shape t = s;
  t.nhwc = true;
  std::mt19937_64 rng(9);
  std::uniform_real_distribution<double> value(-1, 1);
  std::vector<double> x(2 * 4 * 7 * 6), w(6 * 2 * 3 * 2), dy;
  for (double& v : x) v = static_cast<float>(value(rng));
  for (double& v : w) v = static_cast<float>(value(rng));
  // Logical (n,c,h,w) element e of an NCHW tensor, read from its NHWC storage.
  auto nhwc_index = [](int64_t e, int64_t c, int64_t h, int64_t wd) {
    const int64_t n = e / (h * wd * c), rest = e % (h * wd * c);
    const int64_t hh = rest / (wd * c), ww = rest / c % wd, cc = rest % c;
    return ((n * c + cc) * h + hh) * wd + ww;
  };
  const auto a = ReferenceOf(s.Line("conv2d", "f32"), [&](size_t i, int64_t e) { return i == 0 ? x[e] : w[e]; });
  const auto b = ReferenceOf(t.Line("conv2d", "f32"), [&](size_t i, int64_t e) {
    return i == 0 ? x[nhwc_index(e, 4, 7, 6)] : w[nhwc_index(e, 2, 3, 2)];
  });
  ASSERT_EQ(a[0].size(), b[0].size());
  for (size_t e = 0; e < b[0].size(); ++e) {
    EXPECT_DOUBLE_EQ(b[0][e], a[0][nhwc_index(static_cast<int64_t>(e), 6, s.P(), s.Q())]) << e;
  }
}

INSTANTIATE_TEST_SUITE_P(Devices, Conv2dTest, ::testing::Values(DeviceKind::kCpu, DeviceKind::kCuda),
                         [](const auto& info) { return std::string(DeviceKindName(info.param)); });

}  // namespace
}  // namespace opsched
