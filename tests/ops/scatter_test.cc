// Every scatter implementation against the float64 reference: all reductions, dtypes
// (integers exactly, wrapping around), index types, ranks 1-6, every axis (negative
// too), in place and out of place, duplicates, negative indices, empty and one-element
// tensors, non-contiguous strides, out-of-range indices. Runs on the CPU, and on the GPU when there is one.
#include <gtest/gtest.h>

#include <algorithm>
#include <climits>
#include <cstring>
#include <random>
#include <tuple>

#include "core/format.h"
#include "core/gpu/gpu_backend.h"
#include "opsched/runtime.h"
#include "registry/registry.h"
#include "registry/strategy.h"
#include "strategies/dispatcher.h"
#include "tests/records/record_factory.h"
#include "tests/ops/op_test_util.h"
#include "tests/test_util.h"
#include "tuner/trial.h"

namespace opsched {
namespace {

using testing::CheckAllImplementations;

class ScatterTest : public ::testing::TestWithParam<DeviceKind> {
 protected:
  void SetUp() override {
    if (GetParam() != DeviceKind::kCpu) OPSCHED_REQUIRE_GPU();
    target_ = GetParam() == DeviceKind::kCpu ? CpuTarget()
                                             : *QueryTarget(Device{gpu::BackendKind(), 0});
  }
  Workload Canonical(const std::string& line) {
    StatusOr<Workload> w = Registry::Global().ParseCanonical(line);
    EXPECT_TRUE(w.ok()) << line << ": " << w.status();
    return *w;
  }
  // Options of one checked run: fresh inputs, in place or not.
  TrialOptions Options(bool in_place) {
    TrialOptions options;
    options.seed = rng_();
    options.in_place = in_place;
    return options;
  }
  // Runs `samples` configs of every applicable implementation on the uploaded trial and
  // expects each to fail with an InvalidArgument that contains `message`; the runs made.
  int ExpectEveryImplementationReports(Trial& trial, const Workload& w, const std::string& message, int samples) {
    int runs = 0;
    for (const Implementation* impl : testing::ApplicableImplementations(registry_, w, target_)) {
      for (const Config& config : testing::SampleConfigs(impl->Space(w, target_), samples, rng_)) {
        Status s = trial.Run(*impl, config);
        EXPECT_EQ(s.code(), StatusCode::kInvalidArgument) << impl->name() << " " << config.ToString() << ": " << s;
        EXPECT_NE(s.message().find(message), std::string::npos) << impl->name() << " " << config.ToString() << ": " << s;
        ++runs;
      }
    }
    return runs;
  }
  const Registry& registry_ = Registry::Global();
  Target target_;
  std::mt19937_64 rng_{std::random_device{}()};
};

std::string Dims(const std::vector<int64_t>& d) { return fmt::format("{}", fmt::join(d, ",")); }

TEST_P(ScatterTest, RandomShapesEveryReductionDtypeAndAxis) {
  int runs = 0;
  const char* dtypes[] = {"f32", "f16", "bf16", "i32", "i64"};
  const char* reductions[] = {"none", "add", "mul", "min", "max"};
  std::uniform_int_distribution<int> dim(1, 5);
  for (int trial = 0; trial < 120; ++trial) {
    const int rank = 1 + trial % 6;
    std::vector<int64_t> data(rank), idx(rank);
    for (int d = 0; d < rank; ++d) data[d] = dim(rng_);
    const int axis = std::uniform_int_distribution<int>(0, rank - 1)(rng_);
    for (int d = 0; d < rank; ++d) {
      idx[d] = d == axis ? dim(rng_) + 1 : std::uniform_int_distribution<int64_t>(1, data[d])(rng_);
    }
    const char* dtype = dtypes[trial % 5];
    const char* itype = (trial / 3) % 2 ? "i32" : "i64";
    const char* reduction = reductions[(trial / 6) % 5];
    const int written_axis = trial % 4 == 0 ? axis - rank : axis;  // negative axes too
    const std::string line =
        fmt::format("scatter data={0}[{1}] indices={2}[{3}] updates={0}[{3}] axis={4} reduction={5}",
                    dtype, Dims(data), itype, Dims(idx), written_axis, reduction);
    TrialOptions options;
    options.seed = rng_();
    options.generator.index_pattern = trial % 5 == 0 ? "hot" : "uniform";
    options.generator.negative_index_fraction = trial % 3 == 0 ? 0.3 : 0.0;
    options.in_place = trial % 2 == 1;
    OPSCHED_ASSERT_OK(CheckAllImplementations(registry_, Canonical(line), target_, options, 6, rng_, &runs));
  }
  std::printf("%d checked runs\n", runs);
  EXPECT_GT(runs, 200);
}

TEST_P(ScatterTest, DuplicatesKeepTheLastUpdateWhenDeterministic) {
  // 4096 updates into 8 rows: every target is hit many times.
  const Workload w = Canonical(
      "scatter data=f32[8,32] indices=i64[512,32] updates=f32[512,32] axis=0 reduction=none");
  TrialOptions options;
  options.seed = rng_();
  auto trial = Trial::Create(registry_, w, target_, options);
  ASSERT_TRUE(trial.ok()) << trial.status();
  int deterministic = 0;
  for (const Implementation* impl : testing::ApplicableImplementations(registry_, w, target_)) {
    const Config config = impl->Space(w, target_).Enumerate(1).front();
    OPSCHED_ASSERT_OK((*trial)->Run(*impl, config));
    // Check() demands the row-major last update from deterministic implementations and
    // one of the competing updates from the others.
    OPSCHED_ASSERT_OK(Annotate((*trial)->Check(*impl), impl->name()));
    deterministic += impl->traits().deterministic;
  }
  EXPECT_GE(deterministic, target_.kind == DeviceKind::kCpu ? 2 : 2);
}

TEST_P(ScatterTest, EdgeShapes) {
  int runs = 0;
  for (const char* line : {
           // empty updates: out == data
           "scatter data=f32[5,3] indices=i64[0,3] updates=f32[0,3] axis=0 reduction=add",
           // empty data and updates
           "scatter data=f16[0,4] indices=i32[0,4] updates=f16[0,4] axis=1 reduction=none",
           // one element
           "scatter data=f32[1] indices=i64[1] updates=f32[1] axis=0 reduction=none",
           "scatter data=bf16[1,1,1,1,1,1] indices=i64[1,1,1,1,1,1] updates=bf16[1,1,1,1,1,1] "
           "axis=5 reduction=mul",
           // the 1-element write of TVM #7233
           "scatter data=f32[100] indices=i64[1] updates=f32[1] axis=0 reduction=none",
           // odd sizes, a long axis, duplicates with every reduction
           "scatter data=f32[3,257] indices=i32[3,1000] updates=f32[3,1000] axis=1 reduction=add",
           "scatter data=f16[7,1,9] indices=i64[7,1,33] updates=f16[7,1,33] axis=-1 reduction=max",
           "scatter data=f32[2,3,4,5,6] indices=i64[2,3,4,5,6] updates=f32[2,3,4,5,6] axis=2 reduction=min",
           // integers: empty, one element, duplicates on an odd axis
           "scatter data=i64[0,4] indices=i64[0,4] updates=i64[0,4] axis=1 reduction=add",
           "scatter data=i32[1] indices=i32[1] updates=i32[1] axis=0 reduction=mul",
           "scatter data=i64[3,257] indices=i32[3,1000] updates=i64[3,1000] axis=1 reduction=add",
           "scatter data=i32[7,1,9] indices=i64[7,1,33] updates=i32[7,1,33] axis=-1 reduction=min",
       }) {
    for (bool in_place : {false, true}) {
      TrialOptions options = Options(in_place);
      OPSCHED_ASSERT_OK(CheckAllImplementations(registry_, Canonical(line), target_, options, 4, rng_, &runs));
    }
  }
  EXPECT_GT(runs, 16);
}

TEST_P(ScatterTest, NonContiguousStrides) {
  int runs = 0;
  for (const char* reduction : {"none", "add", "max"}) {
    // data: a transposed 9x6 view (strides 1,9); indices: every other column of a 4x10
    // tensor; updates: a transposed 6x4 buffer read as 4x6.
    Workload w("scatter");
    w.SetTensor("data", *TensorDesc::Strided(DType::kF32, {9, 6}, {1, 9}));
    w.SetTensor("indices", *TensorDesc::Strided(DType::kI64, {4, 5}, {10, 2}));
    w.SetTensor("updates", *TensorDesc::Strided(DType::kF32, {4, 5}, {1, 4}));
    w.SetAttr("axis", int64_t(0));
    w.SetAttr("reduction", std::string(reduction));
    OPSCHED_ASSERT_OK(registry_.Canonicalize(&w));
    EXPECT_EQ(w.ToString().find(":[1,9]") != std::string::npos, true) << w.ToString();
    for (bool in_place : {false, true}) {
      TrialOptions options = Options(in_place);
      options.generator.negative_index_fraction = 0.5;
      OPSCHED_ASSERT_OK(CheckAllImplementations(registry_, w, target_, options, 6, rng_, &runs));
    }
  }
  EXPECT_GT(runs, 6);
}

TEST_P(ScatterTest, PairedHalfAtomicsWhenARowSharesItsIndex) {
  // An embedding gradient: every row of indices holds one index (targets of neighbouring
  // updates are neighbours: paired half2/bfloat162 atomics), then rows of mixed indices.
  int checked = 0;
  for (const char* dtype : {"f16", "bf16"}) {
    for (bool shared_rows : {true, false}) {
      const Workload w = Canonical(fmt::format(
          "scatter data={0}[7,6] indices=i64[300,6] updates={0}[300,6] axis=0 reduction=add", dtype));
      for (bool in_place : {false, true}) {
        TrialOptions options = Options(in_place);
        auto trial = Trial::Create(registry_, w, target_, options);
        ASSERT_TRUE(trial.ok()) << trial.status();
        HostTensor& indices = (*trial)->inputs()[1];
        for (int64_t row = 0; row < 300; ++row) {
          for (int64_t j = 0; j < 6; ++j) indices.Set(row * 6 + j, shared_rows ? row % 13 - 6 : (row + j) % 7);
        }
        OPSCHED_ASSERT_OK((*trial)->Upload());
        for (const Implementation* impl : testing::ApplicableImplementations(registry_, w, target_)) {
          for (const Config& config : testing::SampleConfigs(impl->Space(w, target_), 4, rng_)) {
            const std::string where = fmt::format("{} {} {}", w.ToString(), impl->name(), config.ToString());
            OPSCHED_ASSERT_OK(Annotate((*trial)->Run(*impl, config), where));
            OPSCHED_ASSERT_OK(Annotate((*trial)->Check(*impl), where));
            ++checked;
          }
        }
      }
    }
  }
  EXPECT_GT(checked, 16);
}

// Writes `values` into an i32 or i64 host tensor bit-exactly (Set goes through double).
void SetIntegers(HostTensor& t, const std::vector<int64_t>& values) {
  for (size_t i = 0; i < values.size(); ++i) {
    const int64_t at = t.OffsetOf(static_cast<int64_t>(i));
    if (t.desc().dtype() == DType::kI32) {
      const int32_t v = static_cast<int32_t>(values[i]);
      std::memcpy(static_cast<int32_t*>(t.data()) + at, &v, sizeof v);
    } else {
      std::memcpy(static_cast<int64_t*>(t.data()) + at, &values[i], sizeof values[i]);
    }
  }
}

TEST_P(ScatterTest, IntegersAreExactAndWrapAroundLikePyTorch) {
  // Targets 0 and 2 get two updates each; values beyond 2^53 (where a double rounds) and
  // sums and products that overflow, which wrap around in two's complement.
  const std::vector<int64_t> index = {0, 2, 1, 0, 3, 2};
  struct Case {
    DType dtype;
    std::vector<int64_t> data, updates;
  };
  const int64_t big = int64_t(1) << 62;
  const Case cases[] = {
      {DType::kI64,
       {big, -(int64_t(1) << 53) - 1, INT64_MAX, 5},
       {big + 3, INT64_MIN + 1, 9007199254740993, 3, -2, 7}},
      {DType::kI32, {INT32_MAX, -7, INT32_MIN, 65536}, {65536, INT32_MIN, 3, 1, 65536, -2}},
  };
  int checked = 0;
  for (const Case& c : cases) {
    const bool narrow = c.dtype == DType::kI32;
    auto wrap = [narrow](uint64_t v) {
      return narrow ? static_cast<int64_t>(static_cast<int32_t>(static_cast<uint32_t>(v))) : static_cast<int64_t>(v);
    };
    for (const char* reduction : {"add", "mul", "min", "max"}) {
      std::vector<int64_t> want = c.data;
      for (size_t p = 0; p < index.size(); ++p) {
        int64_t& e = want[index[p]];
        const int64_t u = c.updates[p];
        const std::string r = reduction;
        e = r == "add"   ? wrap(static_cast<uint64_t>(e) + static_cast<uint64_t>(u))
            : r == "mul" ? wrap(static_cast<uint64_t>(e) * static_cast<uint64_t>(u))
            : r == "min" ? std::min(e, u)
                         : std::max(e, u);
      }
      const Workload w = Canonical(fmt::format("scatter data={0}[4] indices=i64[6] updates={0}[6] axis=0 reduction={1}",
                                               DTypeName(c.dtype), reduction));
      for (bool in_place : {false, true}) {
        TrialOptions options;
        options.in_place = in_place;
        auto trial = Trial::Create(registry_, w, target_, options);
        ASSERT_TRUE(trial.ok()) << trial.status();
        SetIntegers((*trial)->inputs()[0], c.data);
        SetIntegers((*trial)->inputs()[1], index);
        SetIntegers((*trial)->inputs()[2], c.updates);
        OPSCHED_ASSERT_OK((*trial)->Upload());
        for (const Implementation* impl : testing::ApplicableImplementations(registry_, w, target_)) {
          for (const Config& config : testing::SampleConfigs(impl->Space(w, target_), 2, rng_)) {
            OPSCHED_ASSERT_OK(Annotate((*trial)->Run(*impl, config), impl->name()));
            for (int64_t t = 0; t < 4; ++t) {
              EXPECT_EQ((*trial)->outputs()[0].GetInt(t), want[t])
                  << impl->name() << " " << config.ToString() << " " << w.ToString() << " target " << t;
            }
            ++checked;
          }
        }
      }
    }
  }
  // Sequential and parallel on the CPU; sequential, parallel and sorted on a GPU.
  EXPECT_GE(checked, target_.kind == DeviceKind::kCpu ? 16 : 32);
}

TEST_P(ScatterTest, OutOfRangeIndexIsAnErrorAndDataIsUntouched) {
  for (const char* dtype : {"f32", "f16", "bf16", "i32", "i64"}) {
    const Workload w = Canonical(fmt::format(
        "scatter data={0}[10,20] indices=i64[6,20] updates={0}[6,20] axis=0 reduction=add", dtype));
    for (bool in_place : {false, true}) {
      TrialOptions options = Options(in_place);
      auto trial = Trial::Create(registry_, w, target_, options);
      ASSERT_TRUE(trial.ok());
      // Two bad indices; the first in row-major order is at position [2,7] (value 10).
      HostTensor& indices = (*trial)->inputs()[1];
      indices.Set(4 * 20 + 3, -11);
      indices.Set(2 * 20 + 7, 10);
      OPSCHED_ASSERT_OK((*trial)->Upload());
      for (const Implementation* impl : testing::ApplicableImplementations(registry_, w, target_)) {
        for (const Config& config : testing::SampleConfigs(impl->Space(w, target_), 3, rng_)) {
          Status s = (*trial)->Run(*impl, config);
          ASSERT_EQ(s.code(), StatusCode::kInvalidArgument) << impl->name() << ": " << s;
          EXPECT_NE(s.message().find("index 10 at position [2,7] is out of range [-10,10) of axis 0"),
                    std::string::npos)
              << impl->name() << ": " << s;
          // data (the first input) is never modified, in place included.
          std::vector<uint8_t> now((*trial)->inputs()[0].storage_bytes());
          const Tensor& data = (*trial)->tensors()[0];
          if (data.device.is_cpu()) {
            std::memcpy(now.data(), data.data, now.size());
          } else {
            OPSCHED_ASSERT_OK(gpu::MemcpyAsync(now.data(), data.data, now.size(), nullptr));
            OPSCHED_ASSERT_OK(gpu::StreamSynchronize(nullptr));
          }
          EXPECT_EQ(std::memcmp(now.data(), (*trial)->inputs()[0].data(), now.size()), 0)
              << impl->name() << " modified data";
        }
      }
      // With the indices mended, every implementation runs clean in the same workspace:
      // no bad index left over from the failed calls is reported again.
      indices.Set(4 * 20 + 3, 3);
      indices.Set(2 * 20 + 7, 0);
      OPSCHED_ASSERT_OK((*trial)->Upload());
      for (const Implementation* impl : testing::ApplicableImplementations(registry_, w, target_)) {
        for (const Config& config : testing::SampleConfigs(impl->Space(w, target_), 3, rng_)) {
          OPSCHED_EXPECT_OK((*trial)->Run(*impl, config));
        }
      }
    }
  }
}

// Thousands of blocks: the bad indices sit in early blocks, and the report must name the
// first of them, whichever block finishes last.
TEST_P(ScatterTest, BadIndexOfAnEarlyBlockIsReported) {
  for (const char* dtype : {"f32", "bf16", "i64"}) {
    const Workload w = Canonical(fmt::format(
        "scatter data={0}[1000,64] indices=i64[40000,64] updates={0}[40000,64] axis=0 reduction=add", dtype));
    TrialOptions options = Options(false);
    auto trial = Trial::Create(registry_, w, target_, options);
    ASSERT_TRUE(trial.ok());
    HostTensor& indices = (*trial)->inputs()[1];
    indices.Set(3 * 64 + 5, 1000);      // position [3,5]: the first bad one
    indices.Set(700 * 64 + 9, -1001);  // another, further on
    OPSCHED_ASSERT_OK((*trial)->Upload());
    const int runs = ExpectEveryImplementationReports(
        **trial, w, "index 1000 at position [3,5] is out of range [-1000,1000) of axis 0", 4);
    EXPECT_GE(runs, 4) << dtype;
  }
}

// Every index from the third row on is bad: a million threads meet one, many of them
// report at once (each that holds the smallest position so far publishes it), and the
// slot must end with the first bad position and its own value, for every implementation.
TEST_P(ScatterTest, TheFirstOfAMillionBadIndicesIsReported) {
  for (const char* dtype : {"f32", "bf16", "i64"}) {
    for (const char* reduction : {"add", "none"}) {
      const Workload w = Canonical(fmt::format(
          "scatter data={0}[1000,64] indices=i64[16384,64] updates={0}[16384,64] axis=0 reduction={1}", dtype,
          reduction));
      TrialOptions options = Options(false);
      auto trial = Trial::Create(registry_, w, target_, options);
      ASSERT_TRUE(trial.ok());
      HostTensor& indices = (*trial)->inputs()[1];
      for (int64_t row = 2; row < 16384; ++row) {
        for (int64_t col = 0; col < 64; ++col) indices.Set(row * 64 + col, static_cast<double>(1000 + row + col));
      }
      OPSCHED_ASSERT_OK((*trial)->Upload());
      const int runs = ExpectEveryImplementationReports(
          **trial, w, "index 1002 at position [2,0] is out of range [-1000,1000) of axis 0", 3);
      EXPECT_GE(runs, 4) << dtype << " " << reduction;
    }
  }
}

// The bucketed scatter at sizes of many buckets (odd sizes, duplicates, hot targets, every
// dtype, out of place and in place), each config with and without windows: the random
// shapes above are too small for more than a few buckets, and too small for windows.
TEST_P(ScatterTest, BucketedScatterOverManyBuckets) {
  if (GetParam() == DeviceKind::kCpu) GTEST_SKIP() << "the bucketed scatter is a GPU implementation";
  const Implementation* impl = registry_.FindImplementation("scatter_cuda_bucketed");
  ASSERT_NE(impl, nullptr);
  int runs = 0;
  for (const char* dtype : {"f32", "f16", "bf16", "i32", "i64"}) {
    for (const char* reduction : {"none", "add", "max"}) {
      for (const char* shapes : {"data={0}[100003] indices=i64[300001] updates={0}[300001] axis=0",
                                 "data={0}[3001,37] indices=i32[5000,37] updates={0}[5000,37] axis=0"}) {
        const Workload w =
            Canonical(fmt::format("scatter {} reduction={}", fmt::format(fmt::runtime(shapes), dtype), reduction));
        for (bool in_place : {false, true}) {
          TrialOptions options = Options(in_place);
          options.generator.index_pattern = runs % 2 ? "hot" : "uniform";
          auto trial = Trial::Create(registry_, w, target_, options);
          ASSERT_TRUE(trial.ok()) << trial.status();
          for (Config config : testing::SampleConfigs(impl->Space(w, target_), 4, rng_)) {
            for (int64_t windows : {0, 1}) {  // data copied first, or each window before its bucket
              config.Set("windows", windows);
              OPSCHED_ASSERT_OK(Annotate((*trial)->Run(*impl, config), config.ToString()));
              OPSCHED_ASSERT_OK(Annotate((*trial)->Check(*impl), w.ToString() + " " + config.ToString()));
              ++runs;
            }
          }
        }
      }
    }
  }
  EXPECT_GE(runs, 300);
}

// The column-privatized scatter-add at sizes of many row chunks and column slices: slices
// past the last column (partial), chunks past the last row, one column (rank 1), f32,
// i32 and i64 (exact), hot and uniform targets, negative indices, in place and out of
// place, sampled configs and the two extremes of its space.
TEST_P(ScatterTest, ColumnPrivatizedAddOverRowChunksAndColumnSlices) {
  if (GetParam() == DeviceKind::kCpu) GTEST_SKIP() << "the column-privatized scatter is a GPU implementation";
  const Implementation* impl = registry_.FindImplementation("scatter_cuda_columns");
  ASSERT_NE(impl, nullptr);
  int runs = 0;
  for (const char* line : {"scatter data=i32[300,100] indices=i64[2000,100] updates=i32[2000,100] axis=0 reduction=add",
                           "scatter data=i64[77,40] indices=i32[513,40] updates=i64[513,40] axis=0 reduction=add",
                           "scatter data=f32[1000,33] indices=i64[4097,33] updates=f32[4097,33] axis=0 reduction=add",
                           "scatter data=f32[50] indices=i64[10000] updates=f32[10000] axis=0 reduction=add",
                           "scatter data=i32[1000,256] indices=i64[8192,256] updates=i32[8192,256] axis=0 reduction=add"}) {
    const Workload w = Canonical(line);
    OPSCHED_ASSERT_OK(impl->Applicable(w, target_));
    for (bool in_place : {false, true}) {
      TrialOptions options = Options(in_place);
      options.generator.index_pattern = runs % 2 ? "hot" : "uniform";
      options.generator.negative_index_fraction = 0.2;
      auto trial = Trial::Create(registry_, w, target_, options);
      ASSERT_TRUE(trial.ok()) << trial.status();
      const ConfigSpace space = impl->Space(w, target_);
      std::vector<Config> configs = testing::SampleConfigs(space, 6, rng_);
      // The space's extremes: the widest tile in the most chunks and the smallest blocks,
      // and the narrowest in the fewest chunks and the largest blocks.
      const std::vector<Config> all = space.Enumerate();
      auto shape = [](const Config& c) {
        return std::tuple(c.GetInt("columns", 0), c.GetInt("chunks", 0), -c.GetInt("block", 0));
      };
      auto by_shape = [&](const Config& a, const Config& b) { return shape(a) < shape(b); };
      configs.push_back(*std::max_element(all.begin(), all.end(), by_shape));
      configs.push_back(*std::min_element(all.begin(), all.end(), by_shape));
      for (const Config& config : configs) {
        OPSCHED_ASSERT_OK(Annotate((*trial)->Run(*impl, config), config.ToString()));
        OPSCHED_ASSERT_OK(Annotate((*trial)->Check(*impl), w.ToString() + " " + config.ToString()));
        ++runs;
      }
    }
  }
  EXPECT_EQ(runs, 5 * 2 * 8);
}

TEST_P(ScatterTest, RuntimeReportsDeviceErrorsSynchronouslyOrDeferred) {
  for (DeviceErrors mode : {DeviceErrors::kSynchronous, DeviceErrors::kDeferred}) {
    RuntimeOptions o;
    o.target = target_;
    o.device_errors = mode;
    auto rt = Runtime::Create(o);
    ASSERT_TRUE(rt.ok());
    const Workload w = Canonical(
        "scatter data=f32[100] indices=i64[3] updates=f32[3] axis=0 reduction=none");
    TrialOptions options;
    options.seed = 7;
    auto trial = Trial::Create(registry_, w, target_, options);
    ASSERT_TRUE(trial.ok());
    const std::vector<Tensor>& t = (*trial)->tensors();
    // A good call, a bad one (index 100 at position [1]), another good one.
    OPSCHED_ASSERT_OK((*rt)->Scatter(t[0], t[1], t[2], t[3], 0, ScatterReduction::kNone, (*trial)->stream()));
    (*trial)->inputs()[1].Set(1, 100);
    OPSCHED_ASSERT_OK((*trial)->Upload());
    Status bad = (*rt)->Scatter(t[0], t[1], t[2], t[3], 0, ScatterReduction::kNone, (*trial)->stream());
    Status synced = (*rt)->Synchronize((*trial)->stream());
    const bool deferred = mode == DeviceErrors::kDeferred;  // on the CPU as on a GPU
    const Status& reported = deferred ? synced : bad;
    EXPECT_EQ(reported.code(), StatusCode::kInvalidArgument) << reported;
    EXPECT_NE(reported.message().find("index 100 at position [1] is out of range"), std::string::npos)
        << reported;
    if (deferred) {
      EXPECT_TRUE(bad.ok()) << bad;
      EXPECT_TRUE((*rt)->Synchronize((*trial)->stream()).ok());  // reported once
    }
    (*trial)->inputs()[1].Set(1, -100);  // the smallest valid index
    OPSCHED_ASSERT_OK((*trial)->Upload());
    OPSCHED_ASSERT_OK((*rt)->Scatter(t[0], t[1], t[2], t[3], -1, ScatterReduction::kNone, (*trial)->stream()));
    OPSCHED_ASSERT_OK((*rt)->Synchronize((*trial)->stream()));
  }
}

TEST(ScatterWorkloadTest, ValidationErrorsNameTheProblem) {
  struct Bad {
    const char* line;
    const char* message;
  };
  for (const Bad& bad : {
           Bad{"scatter data=f32[4,4] indices=i64[2,4] updates=f32[2,3] axis=0",
               "updates f32[2,3] and indices i64[2,4] must have the same shape"},
           Bad{"scatter data=f32[4,4] indices=i64[2,4] updates=f16[2,4] axis=0",
               "updates are f16 but data is f32"},
           Bad{"scatter data=f32[4,4] indices=f32[2,4] updates=f32[2,4] axis=0",
               "indices are f32, expected i32 or i64"},
           Bad{"scatter data=i32[4,4] indices=i64[2,4] updates=i64[2,4] axis=0",
               "updates are i64 but data is i32"},
           Bad{"scatter data=f32[4,4] indices=i64[2,4] updates=f32[2,4] axis=2",
               "axis 2 is out of range for rank 2"},
           Bad{"scatter data=f32[4,4] indices=i64[2,5] updates=f32[2,5] axis=0",
               "exceed data f32[4,4] in dimension 1"},
           Bad{"scatter data=f32[4,4] indices=i64[2,4] updates=f32[2,4] axis=0 reduction=avg",
               "unknown reduction 'avg'"},
           Bad{"scatter data=f32[4,4] indices=i64[2,4] updates=f32[2,4] mode=fast",
               "unknown attribute 'mode'"},
           Bad{"scatter data=f32[4,4] indices=i64[4] updates=f32[4] axis=0",
               "must have one rank"},
           Bad{"scatter data=f32[4] indices=i64[4] axis=0", "needs tensors data, indices and updates"},
           Bad{"scatter data=f32[] indices=i64[] updates=f32[] axis=0", "supported ranks are 1 to 6"},
       }) {
    StatusOr<Workload> w = Registry::Global().ParseCanonical(bad.line);
    ASSERT_FALSE(w.ok()) << bad.line;
    EXPECT_NE(w.status().message().find(bad.message), std::string::npos)
        << bad.line << " gave " << w.status();
  }
  // Canonical form: default reduction filled in, negative axis normalised, tensors in order.
  StatusOr<Workload> w = Registry::Global().ParseCanonical(
      "scatter updates=f32[2,4] indices=i64[2,4] data=f32[4,4] axis=-2");
  ASSERT_TRUE(w.ok()) << w.status();
  EXPECT_EQ(w->ToString(),
            "scatter data=f32[4,4] indices=i64[2,4] updates=f32[2,4] axis=0 reduction=none");
}

INSTANTIATE_TEST_SUITE_P(Devices, ScatterTest, ::testing::Values(DeviceKind::kCpu, DeviceKind::kCuda),
                         [](const auto& info) { return std::string(DeviceKindName(info.param)); });


// What the rules serve for `line` (no records, no model), as "implementation config".
void ExpectRuleServes(Dispatcher& d, const std::string& line, const std::string& served) {
  StatusOr<Workload> w = Registry::Global().ParseCanonical(line);
  ASSERT_TRUE(w.ok()) << w.status();
  StatusOr<const CachedDecision*> got = d.Decide(*w);
  ASSERT_TRUE(got.ok()) << line << ": " << got.status();
  const Decision& decision = (*got)->decision;
  EXPECT_EQ(fmt::format("{} {}", decision.implementation->name(), decision.config.ToString()), served)
      << line << "\n" << decision.reason;
  EXPECT_EQ(decision.provenance, Provenance::kHeuristic);
}

// The slice rules decide from shapes alone (no GPU needed): the slice kernels for dense
// updates, with columns that fill a sector while 64 tiles remain, and the closest legal
// columns where shared memory holds fewer; never for sparse updates.
TEST(ScatterStrategyTest, SliceKernelsServeDenseUpdatesOnly) {
  if (Registry::Global().FindImplementation("scatter_cuda_slice") == nullptr) {
    GTEST_SKIP() << "this build has no CUDA implementations (a CPU-only or sanitizer build)";
  }
  Dispatcher d(Registry::Global(), records::testing::TestGpu("NVIDIA H100 80GB HBM3"), nullptr, DispatchOptions{});
  struct Case {
    const char* line;
    const char* served;
  };
  for (const Case& c : {
           Case{"scatter data=f32[1000,256,7,7] indices=i64[1000,256,7,7] updates=f32[1000,256,7,7] axis=0 "
                "reduction=none",
                "scatter_cuda_slice columns=8,threads=256"},
           Case{"scatter data=f32[1000,256,7,7] indices=i64[1000,256,7,7] updates=f32[1000,256,7,7] axis=0 "
                "reduction=add",
                "scatter_cuda_slice_atomic columns=8,threads=256"},
           // 7 updates a column: one thread a column, in order; 256 columns hold 7 KiB.
           Case{"scatter data=f32[1000,256,7,7] indices=i64[1000,256,7,7] updates=f32[1000,256,7,7] axis=3 "
                "reduction=add",
                "scatter_cuda_slice columns=256,threads=0"},
           // 19717 rows: two columns fit 160 KiB (the rule asks for 8); 88648 updates a column.
           Case{"scatter data=f32[19717,128] indices=i64[88648,128] updates=f32[88648,128] axis=0 reduction=add",
                "scatter_cuda_slice_atomic columns=2,threads=1024"},
           // 64 columns: two would leave 32 tiles.
           Case{"scatter data=f32[2708,64] indices=i64[10556,64] updates=f32[10556,64] axis=0 reduction=max",
                "scatter_cuda_slice columns=1,threads=512"},
           // Sparse: 4096 of 30522 rows, 16 of 1024 positions.
           Case{"scatter data=f32[30522,768] indices=i64[4096,768] updates=f32[4096,768] axis=0 reduction=add",
                "scatter_cuda_bucketed block=1024,bucket_bits=6,copy_block=256,copy_vector=16,windows=1"},
           // A 16-position KV-cache write: each target within a 2 KiB row, so not bucketed.
           Case{"scatter data=f16[64,1024,1024] indices=i64[64,1024,16] updates=f16[64,1024,16] axis=2 "
                "reduction=none",
                "scatter_cuda_parallel block=256,copy_block=256,copy_vector=16,items=4"},
           Case{"scatter data=f32[30522,768] indices=i64[256,768] updates=f32[256,768] axis=0 reduction=add",
                "scatter_cuda_parallel block=256,copy_block=256,copy_vector=16,items=4"},
       }) {
    ExpectRuleServes(d, c.line, c.served);
  }
}

// What the column-privatized scatter serves: adds of f32, i32 and i64 along axis 0 with
// nothing outside the axis, contiguous, while a tile of all out rows of 8 columns fits
// its shared memory (host checks: no device needed).
TEST(ScatterColumnsTest, ServesAddsAlongAxisZeroOfFewRows) {
  const Implementation* impl = Registry::Global().FindImplementation("scatter_cuda_columns");
  if (impl == nullptr) GTEST_SKIP() << "this build has no CUDA implementations (a CPU-only or sanitizer build)";
  const Target gpu = records::testing::TestGpu("NVIDIA H200");
  auto applicable = [&](const std::string& line) {
    StatusOr<Workload> w = Registry::Global().ParseCanonical(line);
    EXPECT_TRUE(w.ok()) << line << ": " << w.status();
    return w.ok() && impl->Applicable(*w, gpu).ok();
  };
  EXPECT_TRUE(applicable("scatter data=i32[1000,256] indices=i64[8192,256] updates=i32[8192,256] axis=0 reduction=add"));
  EXPECT_TRUE(applicable("scatter data=f32[50] indices=i64[100] updates=f32[100] axis=0 reduction=add"));
  // 5000 rows of 8 i64 columns: 320 KiB, beyond the tile's 160 KiB; of i32, 160 KiB.
  EXPECT_FALSE(applicable("scatter data=i64[5000,8] indices=i64[10,8] updates=i64[10,8] axis=0 reduction=add"));
  EXPECT_TRUE(applicable("scatter data=i32[5120,8] indices=i64[10,8] updates=i32[10,8] axis=0 reduction=add"));
  EXPECT_FALSE(applicable("scatter data=i32[5121,8] indices=i64[10,8] updates=i32[10,8] axis=0 reduction=add"));
  EXPECT_FALSE(applicable("scatter data=i32[100,64] indices=i64[10,64] updates=i32[10,64] axis=1 reduction=add"));
  EXPECT_FALSE(applicable("scatter data=i32[2,100,64] indices=i64[2,10,64] updates=i32[2,10,64] axis=1 reduction=add"));
  EXPECT_FALSE(applicable("scatter data=i32[100,64] indices=i64[10,64] updates=i32[10,64] axis=0 reduction=max"));
  EXPECT_FALSE(applicable("scatter data=bf16[100,64] indices=i64[10,64] updates=bf16[10,64] axis=0 reduction=add"));
  EXPECT_FALSE(applicable("scatter data=f32[100,64]:[128,1] indices=i64[10,64] updates=f32[10,64] axis=0 reduction=add"));
}

// Bucketing by target pays off only where 1M or more updates land anywhere in a window of
// out larger than L2 (the H100's 50 MiB here); integer data is bucketed too.
TEST(ScatterStrategyTest, BucketedServesTargetsSpreadBeyondL2) {
  if (Registry::Global().FindImplementation("scatter_cuda_bucketed") == nullptr) {
    GTEST_SKIP() << "this build has no CUDA implementations (a CPU-only or sanitizer build)";
  }
  Target h100 = records::testing::TestGpu("NVIDIA H100 80GB HBM3");
  h100.l2_bytes = 50 << 20;
  Dispatcher d(Registry::Global(), h100, nullptr, DispatchOptions{});
  const std::string bucketed = "scatter_cuda_bucketed block=1024,bucket_bits=6,copy_block=256,copy_vector=16,windows=1";
  const std::string parallel = "scatter_cuda_parallel block=256,copy_block=256,copy_vector=16,items=4";
  struct Case {
    const char* line;
    std::string served;
  };
  for (const Case& c : {
           // 128 MiB of i64 targets, 2^24 updates.
           Case{"scatter data=i64[16777216] indices=i64[16777216] updates=i64[16777216] axis=0 reduction=none",
                bucketed},
           // 77 MB: a GPT-2 token-embedding gradient (paired bf16 atomics where the parallel kernel serves).
           Case{"scatter data=bf16[50257,768] indices=i64[8192,768] updates=bf16[8192,768] axis=0 reduction=add",
                bucketed},
           // 51.2 MB, within L2.
           Case{"scatter data=bf16[50000,512] indices=i64[8192,512] updates=bf16[8192,512] axis=0 reduction=add",
                "scatter_cuda_parallel block=256,copy_block=256,copy_vector=16,items=4,pairs=1"},
           // 16 MiB of i32 targets, 2^24 updates.
           Case{"scatter data=i32[65536,64] indices=i64[262144,64] updates=i32[262144,64] axis=0 reduction=add",
                parallel},
           // Under 1M updates into 128 MiB.
           Case{"scatter data=i64[16777216] indices=i64[1000000] updates=i64[1000000] axis=0 reduction=add",
                parallel},
       }) {
    ExpectRuleServes(d, c.line, c.served);
  }
  // A model's pick of it fits only where the targets spread beyond L2 (else the pick is
  // contested and the floor decides), whatever the number of updates.
  const Strategy* strategy = Registry::Global().FindStrategy("scatter");
  ASSERT_NE(strategy, nullptr);
  const StrategyRule* rule = nullptr;
  for (const StrategyRule& r : strategy->rules()) {
    if (r.implementation == "scatter_cuda_bucketed") rule = &r;
  }
  ASSERT_TRUE(rule != nullptr && rule->fits);
  EXPECT_EQ(rule->fits_when, "targets spread over more than L2");
  for (const auto& [line, fits] : std::vector<std::pair<const char*, bool>>{
           {"scatter data=i32[65536,64] indices=i64[262144,64] updates=i32[262144,64] axis=0 reduction=add", false},
           {"scatter data=i32[4096,4096] indices=i64[4096,4096] updates=i32[4096,4096] axis=1 reduction=max", false},
           {"scatter data=i64[16777216] indices=i64[1000] updates=i64[1000] axis=0 reduction=add", true},
       }) {
    StatusOr<Workload> w = Registry::Global().ParseCanonical(line);
    ASSERT_TRUE(w.ok()) << w.status();
    EXPECT_EQ(rule->fits(*w, h100, Config()), fits) << line;
  }
}

}  // namespace
}  // namespace opsched
