// Every reduce implementation against the float64 reference: every axis subset of rank-4
// inputs with and without keepdims, every op and dtype, long reductions that take the
// split paths, NaN and Inf, empty and one-element inputs, non-contiguous strides; the
// Runtime's Reduce and BiasGrad entry points; validation errors. Runs on the CPU, and on
// the GPU when there is one.
#include <gtest/gtest.h>

#include <climits>
#include <cstring>
#include <random>

#include "core/format.h"
#include "core/gpu/gpu_backend.h"
#include "opsched/runtime.h"
#include "tests/ops/op_test_util.h"
#include "tests/test_util.h"
#include "tuner/trial.h"

namespace opsched {
namespace {

using testing::CheckAllImplementations;
using testing::CheckRuntimeCall;

class ReduceTest : public ::testing::TestWithParam<DeviceKind> {
 protected:
  void SetUp() override {
    if (GetParam() != DeviceKind::kCpu) OPSCHED_REQUIRE_GPU();
    target_ = GetParam() == DeviceKind::kCpu ? CpuTarget() : *QueryTarget(Device{gpu::BackendKind(), 0});
  }
  Workload Canonical(const std::string& line) {
    StatusOr<Workload> w = Registry::Global().ParseCanonical(line);
    EXPECT_TRUE(w.ok()) << line << ": " << w.status();
    return *w;
  }
  Status CheckLine(const std::string& line, size_t configs, int* runs, GeneratorOptions generator = {}) {
    TrialOptions options;
    options.seed = rng_();
    options.generator = generator;
    return CheckAllImplementations(registry_, Canonical(line), target_, options, configs, rng_, runs);
  }
  const Registry& registry_ = Registry::Global();
  Target target_;
  std::mt19937_64 rng_{std::random_device{}()};
};

const char* kOps[] = {"sum", "mean", "max", "min", "sumsq"};
const char* kDTypes[] = {"f32", "f16", "bf16"};

TEST_P(ReduceTest, EveryAxisSubsetOfRank4EveryOpAndDtype) {
  int runs = 0;
  std::uniform_int_distribution<int> dim(1, 6);
  int trial = 0;
  for (uint32_t mask = 1; mask < 16; ++mask) {
    for (const char* op : kOps) {
      for (const char* dtype : kDTypes) {
        std::vector<int64_t> shape(4);
        for (int64_t& d : shape) d = dim(rng_);
        std::vector<int64_t> axes;
        for (int d = 0; d < 4; ++d) {
          if (mask & (1u << d)) axes.push_back(trial % 3 == 0 ? d - 4 : d);  // negative axes too
        }
        const bool keepdims = trial % 2 == 1;
        // f16/bf16 inputs give f32 outputs on request.
        const std::string out = std::string(dtype) != "f32" && trial % 4 == 0 ? " dtype=f32" : "";
        const std::string line = fmt::format("reduce x={}[{}] axes={} op={} keepdims={}{}", dtype,
                                             fmt::join(shape, ","), fmt::join(axes, ","), op, keepdims, out);
        OPSCHED_ASSERT_OK(Annotate(CheckLine(line, 3, &runs), line));
        ++trial;
      }
    }
  }
  std::printf("%d checked runs\n", runs);
  EXPECT_GT(runs, 400);
}

TEST_P(ReduceTest, IntegersEveryAxisSubsetLayoutAndOutputType) {
  int runs = 0;
  std::uniform_int_distribution<int> dim(1, 6);
  int trial = 0;
  for (uint32_t mask = 1; mask < 16; ++mask) {
    for (const char* op : {"sum", "max", "min"}) {
      for (const char* dtype : {"i32", "i64"}) {
        std::vector<int64_t> shape(4);
        for (int64_t& d : shape) d = dim(rng_);
        std::vector<int64_t> axes;
        for (int d = 0; d < 4; ++d) {
          if (mask & (1u << d)) axes.push_back(d);
        }
        // i32 sums into i64 on request (PyTorch's default for torch.sum of int32).
        const std::string out = std::string(dtype) == "i32" && trial % 2 == 0 ? " dtype=i64" : "";
        const std::string line = fmt::format("reduce x={}[{}] axes={} op={} keepdims={}{}", dtype,
                                             fmt::join(shape, ","), fmt::join(axes, ","), op, trial % 3 == 0, out);
        OPSCHED_ASSERT_OK(Annotate(CheckLine(line, 3, &runs), line));
        ++trial;
      }
    }
  }
  for (const char* line : {"reduce x=i32[5000,12] axes=1 op=sum", "reduce x=i64[20000,3] axes=0 op=max",
                           "reduce x=i32[33,5,17,19] axes=0,2,3 op=sum dtype=i64", "reduce x=i64[70001] op=min",
                           "reduce x=i32[5,0] axes=1 op=sum", "reduce x=i64[0,5] axes=1 op=max", "reduce x=i32[] op=max"}) {
    OPSCHED_ASSERT_OK(Annotate(CheckLine(line, 6, &runs), line));
  }
  // A transposed view.
  Workload w("reduce");
  w.SetTensor("x", *TensorDesc::Strided(DType::kI64, {9, 6}, {1, 9}));
  w.SetAttr("axes", int64_t(1));
  w.SetAttr("op", std::string("sum"));
  OPSCHED_ASSERT_OK(registry_.Canonicalize(&w));
  TrialOptions options;
  options.seed = rng_();
  OPSCHED_ASSERT_OK(CheckAllImplementations(registry_, w, target_, options, 6, rng_, &runs));
  std::printf("%d checked runs\n", runs);
  EXPECT_GT(runs, 150);
}

TEST_P(ReduceTest, IntegerSumsAreExactAndWrapAround) {
  // Terms beyond 2^53 (where a double rounds) and sums past the type's range.
  struct Case {
    const char* line;
    std::vector<int64_t> x;
    std::vector<int64_t> want;
  };
  const int64_t big = (int64_t(1) << 62) + 1;
  const Case cases[] = {
      {"reduce x=i64[2,3] axes=1 op=sum", {big, big, 3, INT64_MAX, 9007199254740993, -5},
       {static_cast<int64_t>(2 * static_cast<uint64_t>(big) + 3), static_cast<int64_t>(static_cast<uint64_t>(INT64_MAX) + 9007199254740993ull - 5)}},
      {"reduce x=i64[2,3] axes=1 op=max", {big, big + 2, 3, INT64_MIN, 9007199254740993, -5}, {big + 2, 9007199254740993}},
      {"reduce x=i32[2,3] axes=1 op=sum", {INT32_MAX, 1, 0, INT32_MIN, -1, 7}, {INT32_MIN, int64_t(INT32_MIN) + 6}},
      {"reduce x=i32[2,3] axes=1 op=sum dtype=i64", {INT32_MAX, 1, 0, INT32_MIN, -1, 7}, {int64_t(INT32_MAX) + 1, int64_t(INT32_MIN) + 6}},
      {"reduce x=i32[2,3] axes=1 op=min", {INT32_MAX, 1, 0, INT32_MIN, -1, 7}, {0, INT32_MIN}},
  };
  int checked = 0;
  for (const Case& c : cases) {
    const Workload w = Canonical(c.line);
    TrialOptions options;
    auto trial = Trial::Create(registry_, w, target_, options);
    ASSERT_TRUE(trial.ok()) << trial.status();
    HostTensor& x = (*trial)->inputs()[0];
    for (size_t i = 0; i < c.x.size(); ++i) {
      if (x.desc().dtype() == DType::kI32) {
        static_cast<int32_t*>(x.data())[i] = static_cast<int32_t>(c.x[i]);
      } else {
        static_cast<int64_t*>(x.data())[i] = c.x[i];
      }
    }
    OPSCHED_ASSERT_OK((*trial)->Upload());
    for (const Implementation* impl : testing::ApplicableImplementations(registry_, w, target_)) {
      for (const Config& config : testing::SampleConfigs(impl->Space(w, target_), 3, rng_)) {
        OPSCHED_ASSERT_OK(Annotate((*trial)->Run(*impl, config), impl->name()));
        for (size_t o = 0; o < c.want.size(); ++o) {
          EXPECT_EQ((*trial)->outputs()[0].GetInt(static_cast<int64_t>(o)), c.want[o])
              << c.line << " " << impl->name() << " " << config.ToString() << " output " << o;
        }
        ++checked;
      }
    }
  }
  EXPECT_GE(checked, 10);
}

// Long integer reductions through split partials and vector loads keep all 64 bits:
// terms past 2^53 whose sum wraps around, in rows and in columns.
TEST_P(ReduceTest, IntegerSplitPartialsKeepEveryBit) {
  const int64_t big = (int64_t(1) << 60) + 12345;
  int checked = 0;
  for (const char* line : {"reduce x=i64[2,8192] axes=1 op=sum", "reduce x=i64[8192,4] axes=0 op=sum",
                           "reduce x=i64[8192,4] axes=0 op=max", "reduce x=i32[4,8192] axes=1 op=sum dtype=i64"}) {
    const Workload w = Canonical(line);
    auto trial = Trial::Create(registry_, w, target_, TrialOptions{});
    ASSERT_TRUE(trial.ok()) << trial.status();
    HostTensor& x = (*trial)->inputs()[0];
    const bool i32 = x.desc().dtype() == DType::kI32;
    const int64_t outputs = (*trial)->outputs()[0].desc().numel();
    const bool rows = std::string(line).find("axes=1") != std::string::npos;
    std::vector<uint64_t> sum(outputs, 0);
    std::vector<int64_t> max(outputs, INT64_MIN);
    for (int64_t i = 0; i < x.desc().numel(); ++i) {
      const int64_t v = i32 ? (i % 2 ? INT32_MAX - i : INT32_MIN + i) : big + i * 977;
      if (i32) {
        static_cast<int32_t*>(x.data())[i] = static_cast<int32_t>(v);
      } else {
        static_cast<int64_t*>(x.data())[i] = v;
      }
      const int64_t o = rows ? i / (x.desc().numel() / outputs) : i % outputs;
      sum[o] += static_cast<uint64_t>(v);
      max[o] = std::max(max[o], v);
    }
    OPSCHED_ASSERT_OK((*trial)->Upload());
    const bool want_max = std::string(line).find("op=max") != std::string::npos;
    for (const Implementation* impl : testing::ApplicableImplementations(registry_, w, target_)) {
      std::vector<Config> configs = testing::SampleConfigs(impl->Space(w, target_), 4, rng_);
      if (impl->name() == "reduce_cuda_rows") configs.push_back(*ParseConfig("block=256,group=32,split=16,vector=2"));
      if (impl->name() == "reduce_cuda_columns") {
        configs.push_back(*ParseConfig("block_x=32,block_y=8,split=32,vector=2"));
      }
      for (const Config& config : configs) {
        OPSCHED_ASSERT_OK(Annotate((*trial)->Run(*impl, config), std::string(impl->name()) + " " + config.ToString()));
        for (int64_t o = 0; o < outputs; ++o) {
          const int64_t want = want_max ? max[o] : static_cast<int64_t>(sum[o]);
          ASSERT_EQ((*trial)->outputs()[0].GetInt(o), want) << line << " " << impl->name() << " " << config.ToString()
                                                            << " output " << o;
        }
        ++checked;
      }
    }
  }
  EXPECT_GE(checked, 8);
}

TEST_P(ReduceTest, LongReductionsTakeTheSplitPaths) {
  int runs = 0;
  for (const char* line : {
           // few long rows, many short rows, one output of everything
           "reduce x=f32[3,20000] axes=1 op=sum",
           "reduce x=f16[5000,12] axes=1 op=max",
           "reduce x=f32[70000] op=mean",
           // long columns, an NCHW and an NHWC bias gradient, odd sizes
           "reduce x=f32[20000,3] axes=0 op=sumsq",
           "reduce x=bf16[33,5,17,19] axes=0,2,3 op=sum",
           "reduce x=f32[9,13,11,24] axes=0,1,2 op=min",
           "reduce x=f32[4,8,12,16] axes=0,2 op=sum keepdims=true",
       }) {
    OPSCHED_ASSERT_OK(Annotate(CheckLine(line, 12, &runs), line));
  }
  EXPECT_GT(runs, 40);
}

// Split partials are combined by one of three finishing kernels (reduce_cuda_common.cu):
// a thread per output (split <= 4), a block per output (few outputs of 64 parts or more)
// and tiles of 32 outputs by 8 part lanes (the rest, partial tiles included). Each is
// taken here by rows and columns, floats and integers, against the float64 reference.
TEST_P(ReduceTest, SplitPartialsAreCombinedByEveryFinish) {
  if (GetParam() == DeviceKind::kCpu) GTEST_SKIP() << "the finishing kernels are the GPU's";
  struct Case {
    const char* line;
    const char* impl;
    std::vector<const char*> configs;
  };
  const Case cases[] = {
      // 4,100 outputs: threads (split 2), tiles (8, 64: more than 256 outputs), the last tile partial
      {"reduce x=f32[600,4100] axes=0 op=sum", "reduce_cuda_columns",
       {"block_x=32,block_y=4,split=2,vector=4", "block_x=32,block_y=4,split=8,vector=4",
        "block_x=64,block_y=2,split=64,vector=2"}},
      // 100 outputs: blocks (64 and 128 parts), tiles (16 parts; 100 = 3 tiles and 4)
      {"reduce x=f16[1000,100] axes=0 op=max", "reduce_cuda_columns",
       {"block_x=32,block_y=2,split=64,vector=2", "block_x=64,block_y=1,split=128,vector=1",
        "block_x=32,block_y=4,split=16,vector=2"}},
      {"reduce x=bf16[300,1000] axes=1 op=sumsq", "reduce_cuda_rows",
       {"block=256,group=16,split=8,vector=4", "block=128,group=16,split=16,vector=2"}},
      {"reduce x=f32[3,20000] axes=1 op=mean", "reduce_cuda_rows", {"block=256,group=32,split=64,vector=4"}},
      {"reduce x=i64[40,3000] axes=1 op=sum", "reduce_cuda_rows",
       {"block=256,group=16,split=16,vector=2", "block=128,group=32,split=64,vector=1"}},
  };
  int runs = 0;
  for (const Case& c : cases) {
    const Workload w = Canonical(c.line);
    TrialOptions options;
    options.seed = rng_();
    auto trial = Trial::Create(registry_, w, target_, options);
    ASSERT_TRUE(trial.ok()) << trial.status();
    const Implementation* impl = registry_.FindImplementation(c.impl);
    ASSERT_NE(impl, nullptr) << c.impl;
    std::vector<Config> configs;
    for (const char* text : c.configs) configs.push_back(*ParseConfig(text));
    OPSCHED_ASSERT_OK(Annotate(testing::CheckConfigs(**trial, *impl, configs, false, &runs), c.line));
  }
  EXPECT_EQ(runs, 11);
}

TEST_P(ReduceTest, NanAndInfPropagate) {
  int runs = 0;
  GeneratorOptions specials;
  specials.special_value_fraction = 0.05;
  for (const char* op : kOps) {
    for (const char* shape : {"f32[64,33]", "f16[7,300]"}) {
      for (const char* axes : {"1", "0"}) {
        const std::string line = fmt::format("reduce x={} axes={} op={}", shape, axes, op);
        OPSCHED_ASSERT_OK(Annotate(CheckLine(line, 3, &runs, specials), line));
      }
    }
  }
  EXPECT_GT(runs, 20);
}

TEST_P(ReduceTest, EmptyAndOneElement) {
  int runs = 0;
  for (const char* line : {
           "reduce x=f32[0,5] axes=1 op=max",    // no outputs
           "reduce x=f32[5,0] axes=1 op=sum",    // empty sums are 0
           "reduce x=f16[3,0,2] axes=1 op=mean", // empty means are NaN
           "reduce x=f32[4,0] axes=1 op=sumsq",
           "reduce x=f32[1] axes=0 op=min",
           "reduce x=bf16[1,1,1,1] axes=1,3 op=sum keepdims=true",
           "reduce x=f32[] op=max",              // rank 0: one term
           "reduce x=f32[6,1,5] axes=1 op=sum",  // a size-1 axis: a copy
       }) {
    OPSCHED_ASSERT_OK(Annotate(CheckLine(line, 6, &runs), line));
  }
  EXPECT_GT(runs, 8);
}

TEST_P(ReduceTest, NonContiguousStrides) {
  int runs = 0;
  struct View {
    std::vector<int64_t> shape, strides;
  };
  for (const View& v : {
           View{{9, 6}, {1, 9}},               // a transposed 6x9 buffer
           View{{4, 5}, {20, 2}},              // every other column: no contiguous axis
           View{{3, 4, 5}, {1, 15, 3}},        // permuted
           View{{2, 3, 4, 6}, {72, 1, 18, 3}}, // NHWC storage read as NCHW
       }) {
    for (uint32_t mask = 1; mask < (1u << v.shape.size()); ++mask) {
      for (const char* op : {"sum", "max"}) {
        Workload w("reduce");
        w.SetTensor("x", *TensorDesc::Strided(DType::kF32, v.shape, v.strides));
        Dims axes;
        for (size_t d = 0; d < v.shape.size(); ++d) {
          if (mask & (1u << d)) axes.push_back(static_cast<int64_t>(d));
        }
        w.SetAttr("axes", axes);
        w.SetAttr("op", std::string(op));
        OPSCHED_ASSERT_OK(registry_.Canonicalize(&w));
        TrialOptions options;
        options.seed = rng_();
        OPSCHED_ASSERT_OK(Annotate(CheckAllImplementations(registry_, w, target_, options, 4, rng_, &runs),
                                   w.ToString()));
      }
    }
  }
  EXPECT_GT(runs, 60);
}

TEST_P(ReduceTest, RuntimeServesReduceAndBiasGrad) {
  RuntimeOptions o;
  o.target = target_;
  auto rt = Runtime::Create(o);
  ASSERT_TRUE(rt.ok()) << rt.status();
  Runtime& runtime = **rt;
  // Reduce: mean over axes -1 and 0 of a 3-D tensor, keepdims.
  using Tensors = std::vector<Tensor>;
  OPSCHED_ASSERT_OK(CheckRuntimeCall(registry_, target_, Canonical("reduce x=f32[6,5,40] axes=0,2 op=mean keepdims=true"),
                                     [&](const Tensors& t, const Stream& s) {
                                       const int64_t axes[] = {-1, 0};
                                       return runtime.Reduce(t[0], t[1], axes, ReduceKind::kMean, true, s);
                                     }));
  // An f16 sum into f32 over every axis (empty axes).
  OPSCHED_ASSERT_OK(CheckRuntimeCall(registry_, target_, Canonical("reduce x=f16[7,9,11] op=sum dtype=f32"),
                                     [&](const Tensors& t, const Stream& s) {
                                       return runtime.Reduce(t[0], t[1], {}, ReduceKind::kSum, false, s);
                                     }));
  // Bias gradients: NCHW sums over 0,2,3; NHWC over 0,1,2.
  OPSCHED_ASSERT_OK(CheckRuntimeCall(registry_, target_, Canonical("reduce x=f32[8,16,14,14] axes=0,2,3 op=sum"),
                                     [&](const Tensors& t, const Stream& s) {
                                       return runtime.BiasGrad(t[0], t[1], "nchw", s);
                                     }));
  OPSCHED_ASSERT_OK(CheckRuntimeCall(registry_, target_, Canonical("reduce x=f32[8,14,14,16] axes=0,1,2 op=sum"),
                                     [&](const Tensors& t, const Stream& s) {
                                       return runtime.BiasGrad(t[0], t[1], "nhwc", s);
                                     }));
  // Wrong output shape and unknown layout: errors before any launch.
  TrialOptions options;
  auto trial = Trial::Create(registry_, Canonical("reduce x=f32[8,16,4,4] axes=0,2,3 op=sum"), target_, options);
  ASSERT_TRUE(trial.ok());
  const std::vector<Tensor>& t = (*trial)->tensors();
  Tensor wrong = t[1];
  wrong.desc = TensorDesc::Contiguous(DType::kF32, {8});
  EXPECT_FALSE(runtime.BiasGrad(t[0], wrong, "nchw", (*trial)->stream()).ok());
  Status layout = runtime.BiasGrad(t[0], t[1], "chwn", (*trial)->stream());
  EXPECT_NE(layout.message().find("unknown layout 'chwn'"), std::string::npos) << layout;
}

TEST(ReduceWorkloadTest, ValidationErrorsNameTheProblem) {
  struct Bad {
    const char* line;
    const char* message;
  };
  for (const Bad& bad : {
           Bad{"reduce x=f32[4,4] axes=2", "axis 2 is out of range for rank 2"},
           Bad{"reduce x=f32[4,4] axes=1,-1", "axis 1 is given twice"},
           Bad{"reduce x=i32[4,4] axes=1 op=mean", "op mean takes f32, f16 or bf16 (x is i32; integers take sum"},
           Bad{"reduce x=i64[4,4] axes=1 op=sumsq", "op sumsq takes f32, f16 or bf16 (x is i64"},
           Bad{"reduce x=i32[4,4] axes=1 dtype=f32", "dtype f32 is not available for x i32 (x's own type or i64)"},
           Bad{"reduce x=i64[4,4] axes=1 dtype=i32", "dtype i32 is not available for x i64 (x's own type or i64)"},
           Bad{"reduce x=f32[4,4] axes=1 op=prod", "unknown op 'prod'"},
           Bad{"reduce x=f32[4,0] axes=1 op=max", "max over an empty set of terms"},
           Bad{"reduce x=f32[4,4] axes=1 dtype=f16", "dtype f16 is not available for x f32"},
           Bad{"reduce x=f32[4,4] axes=1 mode=fast", "unknown attribute 'mode'"},
           Bad{"reduce x=f32[1,1,1,1,1,1,1] axes=1", "supported ranks are 0 to 6"},
           Bad{"reduce y=f32[4]", "exactly one tensor, x"},
       }) {
    StatusOr<Workload> w = Registry::Global().ParseCanonical(bad.line);
    ASSERT_FALSE(w.ok()) << bad.line;
    EXPECT_NE(w.status().message().find(bad.message), std::string::npos) << bad.line << " gave " << w.status();
  }
  // Canonical form: axes sorted and non-negative, defaults filled in, dtype only when it
  // differs from x's.
  StatusOr<Workload> w = Registry::Global().ParseCanonical("reduce x=f32[128,16,28,28] axes=3,-4,2");
  ASSERT_TRUE(w.ok()) << w.status();
  EXPECT_EQ(w->ToString(), "reduce x=f32[128,16,28,28] axes=0,2,3 op=sum keepdims=false");
  w = Registry::Global().ParseCanonical("reduce x=f16[4,4] axes=1 op=max dtype=f16");
  ASSERT_TRUE(w.ok()) << w.status();
  EXPECT_EQ(w->ToString(), "reduce x=f16[4,4] axes=1 op=max keepdims=false");
}

INSTANTIATE_TEST_SUITE_P(Devices, ReduceTest, ::testing::Values(DeviceKind::kCpu, DeviceKind::kCuda),
                         [](const auto& info) { return std::string(DeviceKindName(info.param)); });

}  // namespace
}  // namespace opsched
