// The C API (opsched/c_api.h) on the CPU: every op through plain C structs against the
// float64 reference (fresh inputs, poisoned outputs, edge shapes, strides, duplicate
// indices), and every mistake a caller can make answered by a code and a message, with
// the data untouched.
#include "opsched/c_api.h"

#include <cmath>
#include <cstddef>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "core/host_tensor.h"
#include "registry/registry.h"
#include "tests/ops/op_test_util.h"
#include "tests/test_files.h"
#include "tests/test_util.h"

namespace opsched {
namespace {

using testing::CheckRuntimeCall;

opsched_tensor ToC(const Tensor& t) {
  return opsched_tensor{t.data, static_cast<int32_t>(t.desc.dtype()), t.desc.rank(), t.desc.shape().data(),
                        t.desc.strides().data(), static_cast<int32_t>(t.device.kind), t.device.index};
}

// The error of a C status: OK, or the code with this thread's last message.
Status StatusOf(opsched_status code) {
  if (code == OPSCHED_OK) return absl::OkStatus();
  return Status(static_cast<StatusCode>(code), opsched_last_error());
}

class CApiTest : public ::testing::Test {
 protected:
  void SetUp() override { runtime_ = Create(/*synchronous_errors=*/1); }
  void TearDown() override { opsched_runtime_destroy(runtime_); }

  static opsched_runtime* Create(int32_t synchronous_errors) {
    opsched_runtime_options o;
    opsched_runtime_options_init(&o);
    o.device_type = OPSCHED_CPU;
    o.synchronous_errors = synchronous_errors;
    opsched_runtime* rt = nullptr;
    EXPECT_EQ(opsched_runtime_create(&o, &rt), OPSCHED_OK) << opsched_last_error();
    return rt;
  }

  Workload Canonical(const std::string& line) {
    StatusOr<Workload> w = Registry::Global().ParseCanonical(line);
    EXPECT_TRUE(w.ok()) << line << ": " << w.status();
    return w.ok() ? *w : Workload();
  }

  // Runs `line` through `call` on poisoned outputs and checks against the reference.
  Status Check(const std::string& line, const testing::RuntimeCall& call) {
    return CheckRuntimeCall(Registry::Global(), CpuTarget(), Canonical(line), call);
  }

  opsched_runtime* runtime_ = nullptr;
};

int32_t ScatterReductionOf(std::string_view name) {
  if (name == "add") return OPSCHED_SCATTER_ADD;
  if (name == "mul") return OPSCHED_SCATTER_MUL;
  if (name == "min") return OPSCHED_SCATTER_MIN;
  if (name == "max") return OPSCHED_SCATTER_MAX;
  return OPSCHED_SCATTER_NONE;
}

TEST_F(CApiTest, ScatterMatchesTheReference) {
  const std::vector<std::string> lines = {
      // Every reduction and element type, both index types, duplicate indices.
      "scatter data=f32[37,9] indices=i64[300,9] updates=f32[300,9] axis=0 reduction=add",
      "scatter data=f16[5,33] indices=i32[5,70] updates=f16[5,70] axis=1 reduction=max",
      "scatter data=bf16[6,7,3] indices=i64[6,20,3] updates=bf16[6,20,3] axis=-2 reduction=min",
      "scatter data=f32[11,4] indices=i32[40,4] updates=f32[40,4] axis=0 reduction=mul",
      "scatter data=f32[100] indices=i64[1] updates=f32[1] axis=0 reduction=none",
      // Edge shapes: one element, empty updates, an empty data tensor, odd sizes.
      "scatter data=f32[1] indices=i64[1] updates=f32[1] axis=0 reduction=add",
      "scatter data=f32[5,3] indices=i64[0,3] updates=f32[0,3] axis=0 reduction=add",
      "scatter data=f16[0,4] indices=i32[0,4] updates=f16[0,4] axis=1 reduction=none",
      "scatter data=f32[3,257] indices=i32[3,1000] updates=f32[3,1000] axis=1 reduction=add",
      // Strided data and updates.
      "scatter data=f32[6,5]:[1,6] indices=i64[9,5] updates=f32[9,5]:[10,2] axis=0 reduction=add",
  };
  for (const std::string& line : lines) {
    const Workload w = Canonical(line);
    const int64_t axis = *w.GetInt("axis");
    const int32_t reduction = ScatterReductionOf(*w.GetString("reduction"));
    OPSCHED_EXPECT_OK(Check(line, [&](const std::vector<Tensor>& t, const Stream&) {
      const opsched_tensor d = ToC(t[0]), i = ToC(t[1]), u = ToC(t[2]), o = ToC(t[3]);
      return StatusOf(opsched_scatter(runtime_, &d, &i, &u, &o, axis, reduction, nullptr));
    }));
  }
}

TEST_F(CApiTest, ReduceAndBiasGradMatchTheReference) {
  struct Case {
    std::string line;
    std::vector<int64_t> axes;  // as the caller gives them (negative, any order, none)
    int32_t op;
    bool keepdims;
  };
  const std::vector<Case> cases = {
      {"reduce x=f32[6,5,40] axes=0,2 op=mean keepdims=true", {-1, 0}, OPSCHED_REDUCE_MEAN, true},
      {"reduce x=f16[7,9,11] op=sum dtype=f32", {}, OPSCHED_REDUCE_SUM, false},
      {"reduce x=bf16[3,129] axes=1 op=max", {1}, OPSCHED_REDUCE_MAX, false},
      {"reduce x=f32[1] axes=0 op=min", {0}, OPSCHED_REDUCE_MIN, false},
      {"reduce x=f32[4,0,3] axes=1 op=sum", {1}, OPSCHED_REDUCE_SUM, false},
      {"reduce x=f32[5,7]:[1,5] axes=0 op=sumsq", {0}, OPSCHED_REDUCE_SUM_SQUARES, false},
  };
  for (const Case& c : cases) {
    OPSCHED_EXPECT_OK(Check(c.line, [&](const std::vector<Tensor>& t, const Stream&) {
      const opsched_tensor x = ToC(t[0]), y = ToC(t[1]);
      return StatusOf(opsched_reduce(runtime_, &x, &y, c.axes.data(), static_cast<int32_t>(c.axes.size()), c.op,
                                     c.keepdims, nullptr));
    }));
  }
  OPSCHED_EXPECT_OK(Check("reduce x=f32[8,16,6,5] axes=0,2,3 op=sum", [&](const std::vector<Tensor>& t, const Stream&) {
    const opsched_tensor dy = ToC(t[0]), db = ToC(t[1]);
    return StatusOf(opsched_bias_grad(runtime_, &dy, &db, OPSCHED_NCHW, nullptr));
  }));
  OPSCHED_EXPECT_OK(Check("reduce x=f32[3,5,6,16] axes=0,1,2 op=sum", [&](const std::vector<Tensor>& t, const Stream&) {
    const opsched_tensor dy = ToC(t[0]), db = ToC(t[1]);
    return StatusOf(opsched_bias_grad(runtime_, &dy, &db, OPSCHED_NHWC, nullptr));
  }));
}

TEST_F(CApiTest, Conv2dFamilyMatchesTheReference) {
  opsched_conv2d_params p;
  opsched_conv2d_params_init(&p);
  p.stride[0] = 2;
  p.pad[0] = p.pad[1] = 1;
  p.groups = 2;
  const std::string attrs = " stride=2,1 pad=1,1 dilation=1,1 groups=2 layout=nchw";
  OPSCHED_EXPECT_OK(Check("conv2d x=f32[3,4,11,8] w=f32[6,2,3,3]" + attrs, [&](const std::vector<Tensor>& t, const Stream&) {
    const opsched_tensor x = ToC(t[0]), w = ToC(t[1]), y = ToC(t[2]);
    return StatusOf(opsched_conv2d(runtime_, &x, &w, &y, &p, nullptr));
  }));
  OPSCHED_EXPECT_OK(Check("conv2d_bias_act x=f32[3,4,11,8] w=f32[6,2,3,3] b=f32[6] act=tanh" + attrs,
                          [&](const std::vector<Tensor>& t, const Stream&) {
                            const opsched_tensor x = ToC(t[0]), w = ToC(t[1]), b = ToC(t[2]), y = ToC(t[3]);
                            return StatusOf(opsched_conv2d_bias_act(runtime_, &x, &w, &b, &y, &p, OPSCHED_ACT_TANH,
                                                                    nullptr));
                          }));
  // The backward pass, with the bias gradient checked against a float64 sum of dy.
  std::vector<double> db_got, db_want;
  OPSCHED_EXPECT_OK(Check("conv2d_backward x=f32[3,4,11,8] w=f32[6,2,3,3] dy=f32[3,6,6,8]" + attrs,
                          [&](const std::vector<Tensor>& t, const Stream&) {
                            const opsched_tensor x = ToC(t[0]), w = ToC(t[1]), dy = ToC(t[2]), dx = ToC(t[3]),
                                                 dw = ToC(t[4]);
                            std::vector<float> db(6, std::nanf(""));
                            const int64_t db_shape[] = {6};
                            const opsched_tensor dbt{db.data(), OPSCHED_F32, 1, db_shape, nullptr, OPSCHED_CPU, 0};
                            const opsched_status s =
                                opsched_conv2d_backward(runtime_, &x, &w, &dy, &dx, &dw, &dbt, &p, nullptr);
                            const float* g = t[2].data_as<float>();
                            db_want.assign(6, 0.0);
                            for (int64_t i = 0; i < t[2].desc.numel(); ++i) db_want[(i / 48) % 6] += g[i];
                            db_got.assign(db.begin(), db.end());
                            return StatusOf(s);
                          }));
  ASSERT_EQ(db_got.size(), 6u);
  for (int k = 0; k < 6; ++k) EXPECT_NEAR(db_got[k], db_want[k], 1e-4 * (1 + std::abs(db_want[k]))) << k;
  // NHWC.
  opsched_conv2d_params nhwc;
  opsched_conv2d_params_init(&nhwc);
  nhwc.layout = OPSCHED_NHWC;
  OPSCHED_EXPECT_OK(Check("conv2d x=f16[2,5,7,3] w=f16[4,1,1,3] layout=nhwc", [&](const std::vector<Tensor>& t,
                                                                                   const Stream&) {
    const opsched_tensor x = ToC(t[0]), w = ToC(t[1]), y = ToC(t[2]);
    return StatusOf(opsched_conv2d(runtime_, &x, &w, &y, &nhwc, nullptr));
  }));
}

// data [8,5] f32, indices and updates [3,5]; index 8 at [1,2] is out of range.
struct OutOfRange {
  OutOfRange() {
    for (int i = 0; i < 40; ++i) data[i] = i * 0.5f;
    for (int i = 0; i < 15; ++i) {
      indices[i] = i % 8;
      updates[i] = 1;
    }
    indices[1 * 5 + 2] = 8;
    std::memset(out, 0xab, sizeof(out));
    std::memcpy(data_before, data, sizeof(data));
    std::memcpy(out_before, out, sizeof(out));
  }
  bool Untouched() const {
    return std::memcmp(data, data_before, sizeof(data)) == 0 && std::memcmp(out, out_before, sizeof(out)) == 0;
  }
  float data[40], updates[15], out[40], data_before[40], out_before[40];
  int64_t indices[15];
  const int64_t data_shape[2] = {8, 5}, index_shape[2] = {3, 5};
  opsched_tensor d{data, OPSCHED_F32, 2, data_shape, nullptr, OPSCHED_CPU, 0};
  opsched_tensor i{indices, OPSCHED_I64, 2, index_shape, nullptr, OPSCHED_CPU, 0};
  opsched_tensor u{updates, OPSCHED_F32, 2, index_shape, nullptr, OPSCHED_CPU, 0};
  opsched_tensor o{out, OPSCHED_F32, 2, data_shape, nullptr, OPSCHED_CPU, 0};
};

constexpr char kOutOfRange[] = "index 8 at position [1,2] is out of range [-8,8) of axis 0";

TEST_F(CApiTest, OutOfRangeIndexIsADataErrorAndWritesNothing) {
  OutOfRange t;
  EXPECT_EQ(opsched_scatter(runtime_, &t.d, &t.i, &t.u, &t.o, 0, OPSCHED_SCATTER_ADD, nullptr), OPSCHED_OUT_OF_RANGE);
  EXPECT_NE(std::string(opsched_last_error()).find(kOutOfRange), std::string::npos) << opsched_last_error();
  EXPECT_TRUE(t.Untouched());
  // In place too.
  EXPECT_EQ(opsched_scatter(runtime_, &t.d, &t.i, &t.u, &t.d, 0, OPSCHED_SCATTER_ADD, nullptr), OPSCHED_OUT_OF_RANGE);
  EXPECT_TRUE(t.Untouched());
}

TEST_F(CApiTest, DeferredDataErrorsArriveAtSynchronize) {
  opsched_runtime* deferred = Create(/*synchronous_errors=*/0);
  OutOfRange t;
  EXPECT_EQ(opsched_scatter(deferred, &t.d, &t.i, &t.u, &t.o, 0, OPSCHED_SCATTER_ADD, nullptr), OPSCHED_OK);
  EXPECT_TRUE(t.Untouched());
  EXPECT_EQ(opsched_synchronize(deferred, nullptr), OPSCHED_OUT_OF_RANGE);
  EXPECT_NE(std::string(opsched_last_error()).find(kOutOfRange), std::string::npos) << opsched_last_error();
  EXPECT_EQ(opsched_synchronize(deferred, nullptr), OPSCHED_OK);  // reported once
  opsched_runtime_destroy(deferred);
}

// Expects `code` to be InvalidArgument with a message containing `want`.
void ExpectInvalid(opsched_status code, const std::string& want) {
  EXPECT_EQ(code, OPSCHED_INVALID_ARGUMENT) << want;
  EXPECT_NE(std::string(opsched_last_error()).find(want), std::string::npos)
      << "message '" << opsched_last_error() << "' lacks '" << want << "'";
}

TEST_F(CApiTest, BadArgumentsAreErrorsWithMessagesAndTouchNothing) {
  OutOfRange t;
  t.indices[7] = 2;  // every index in range from here on
  std::memcpy(t.data_before, t.data, sizeof(t.data));
  auto scatter = [&](const opsched_tensor* d, const opsched_tensor* i, const opsched_tensor* u,
                     const opsched_tensor* o, int32_t reduction = OPSCHED_SCATTER_ADD, int64_t axis = 0) {
    return opsched_scatter(runtime_, d, i, u, o, axis, reduction, nullptr);
  };
  ExpectInvalid(opsched_scatter(nullptr, &t.d, &t.i, &t.u, &t.o, 0, 0, nullptr), "scatter: the runtime is null");
  ExpectInvalid(scatter(nullptr, &t.i, &t.u, &t.o), "scatter: data is null");
  ExpectInvalid(scatter(&t.d, &t.i, &t.u, nullptr), "scatter: out is null");
  ExpectInvalid(scatter(&t.d, &t.i, &t.u, &t.o, 9), "scatter: reduction 9 is unknown");
  ExpectInvalid(scatter(&t.d, &t.i, &t.u, &t.o, OPSCHED_SCATTER_ADD, 2), "axis 2 is out of range for rank 2");
  // Wrong shapes: updates [3,4] for indices [3,5]; an output of another shape.
  const int64_t short_shape[2] = {3, 4}, small_shape[2] = {4, 5};
  opsched_tensor u = t.u;
  u.shape = short_shape;
  ExpectInvalid(scatter(&t.d, &t.i, &u, &t.o), "must have the same shape");
  opsched_tensor o = t.o;
  o.shape = small_shape;
  ExpectInvalid(scatter(&t.d, &t.i, &t.u, &o), "scatter: tensor 3 is f32[4,5] but the workload has f32[8,5]");
  // Unsupported and unknown dtypes, bad ranks, shapes and strides.
  opsched_tensor d = t.d;
  d.dtype = OPSCHED_I32;
  ExpectInvalid(scatter(&d, &t.i, &t.u, &t.o), "updates are f32 but data is i32");
  d.dtype = 7;
  ExpectInvalid(scatter(&d, &t.i, &t.u, &t.o), "scatter: data has unknown dtype 7");
  d = t.d;
  d.rank = 9;
  ExpectInvalid(scatter(&d, &t.i, &t.u, &t.o), "scatter: data has rank 9");
  d.rank = 2;
  d.shape = nullptr;
  ExpectInvalid(scatter(&d, &t.i, &t.u, &t.o), "scatter: data has rank 2 but no shape");
  const int64_t negative[2] = {-5, 1}, overlapping[2] = {0, 1};
  d = t.d;
  d.strides = negative;
  ExpectInvalid(scatter(&d, &t.i, &t.u, &t.o), "scatter: data: ");
  d.strides = overlapping;
  ExpectInvalid(scatter(&d, &t.i, &t.u, &t.o), "scatter: data has overlapping strides");
  d = t.d;
  d.device_type = 5;
  ExpectInvalid(scatter(&d, &t.i, &t.u, &t.o), "unknown device type 5");
  d.device_type = OPSCHED_CUDA;
  ExpectInvalid(scatter(&d, &t.i, &t.u, &t.o), "is on cuda:0, the target is cpu");
  d = t.d;
  d.data = nullptr;
  ExpectInvalid(scatter(&d, &t.i, &t.u, &t.o), "has no data");
  EXPECT_TRUE(t.Untouched());
  // The reduce, bias gradient and conv2d arguments of their own.
  const int64_t x_shape[2] = {8, 5};
  const opsched_tensor x{t.data, OPSCHED_F32, 2, x_shape, nullptr, OPSCHED_CPU, 0};
  const int64_t y_shape[1] = {8};
  const opsched_tensor y{t.out, OPSCHED_F32, 1, y_shape, nullptr, OPSCHED_CPU, 0};
  ExpectInvalid(opsched_reduce(runtime_, &x, &y, nullptr, 1, OPSCHED_REDUCE_SUM, 0, nullptr), "reduce: 1 axes but no list");
  const int64_t axis = 1;
  ExpectInvalid(opsched_reduce(runtime_, &x, &y, &axis, 1, 17, 0, nullptr), "reduce: op 17 is unknown");
  ExpectInvalid(opsched_bias_grad(runtime_, &x, &y, 4, nullptr), "bias gradient: layout 4 is unknown");
  opsched_conv2d_params p;
  opsched_conv2d_params_init(&p);
  p.struct_size = 3;
  ExpectInvalid(opsched_conv2d(runtime_, &x, &x, &y, &p, nullptr), "params struct_size 3");
  opsched_conv2d_params_init(&p);
  p.math = 4;
  ExpectInvalid(opsched_conv2d(runtime_, &x, &x, &y, &p, nullptr), "conv2d: math 4 is unknown");
  opsched_conv2d_params_init(&p);
  ExpectInvalid(opsched_conv2d_bias_act(runtime_, &x, &x, &y, &y, &p, 9, nullptr), "activation 9 is unknown");
  ExpectInvalid(opsched_conv2d(runtime_, &x, &x, &y, &p, nullptr), "conv2d");
  EXPECT_TRUE(t.Untouched());
}

TEST(CApiRuntimeTest, CreationErrorsAndTarget) {
  EXPECT_EQ(opsched_c_api_version(), OPSCHED_C_API_VERSION);
  opsched_runtime_options o;
  opsched_runtime_options_init(&o);
  o.device_type = OPSCHED_CPU;
  const char* missing[] = {"/nonexistent/opsched-records.log"};
  o.record_files = missing;
  o.num_record_files = 1;
  opsched_runtime* rt = reinterpret_cast<opsched_runtime*>(0x1);
  EXPECT_NE(opsched_runtime_create(&o, &rt), OPSCHED_OK);
  EXPECT_EQ(rt, nullptr);
  EXPECT_NE(std::string(opsched_last_error()).find("/nonexistent/opsched-records.log"), std::string::npos)
      << opsched_last_error();
  o.record_files = nullptr;
  ExpectInvalid(opsched_runtime_create(&o, &rt), "1 record files but no list");
  o.num_record_files = 0;
  o.struct_size = sizeof(o) + 8;
  ExpectInvalid(opsched_runtime_create(&o, &rt), "struct_size");
  o.struct_size = sizeof(o);
  o.device_type = 9;
  ExpectInvalid(opsched_runtime_create(&o, &rt), "unknown device type 9");
  ExpectInvalid(opsched_runtime_create(nullptr, nullptr), "the result pointer is null");
  ExpectInvalid(opsched_set_log_level("loud"), "unknown level 'loud'");
  EXPECT_EQ(opsched_set_log_level("warn"), OPSCHED_OK);

  // A model that cannot be read leaves the runtime without it, saying why.
  o.device_type = OPSCHED_CPU;
  o.model_file = "/nonexistent/opsched-model.json";
  ASSERT_EQ(opsched_runtime_create(&o, &rt), OPSCHED_OK) << opsched_last_error();
  EXPECT_NE(std::string(opsched_runtime_model_error(rt)).find("opsched-model.json"), std::string::npos);
  EXPECT_EQ(std::string(opsched_runtime_target(rt)).rfind("cpu", 0), 0u) << opsched_runtime_target(rt);
  int32_t kind = -1, index = -1;
  ASSERT_EQ(opsched_runtime_device(rt, &kind, &index), OPSCHED_OK);
  EXPECT_EQ(kind, OPSCHED_CPU);
  EXPECT_EQ(index, 0);

  char* text = nullptr;
  ASSERT_EQ(opsched_explain(rt, "scatter data=f32[1000,64] indices=i64[4096,64] updates=f32[4096,64] axis=0 "
                                "reduction=add", &text),
            OPSCHED_OK)
      << opsched_last_error();
  EXPECT_NE(std::string(text).find("implementation: scatter_cpu"), std::string::npos) << text;
  opsched_free_string(text);
  ExpectInvalid(opsched_explain(rt, "scatter data=i32[4] indices=i64[2] updates=i64[2]", &text), "updates are i64 but data is i32");
  EXPECT_EQ(text, nullptr);
  ExpectInvalid(opsched_explain(rt, nullptr, &text), "the workload line is null");
  ExpectInvalid(opsched_explain(rt, "reduce x=f32[4]", nullptr), "the result pointer is null");
  opsched_runtime_destroy(rt);
  opsched_runtime_destroy(nullptr);
  EXPECT_STREQ(opsched_runtime_target(nullptr), "");
}

TEST(CApiRuntimeTest, RecordUntunedFileCollectsServedWorkloads) {
  const std::string file = testing::TempPath("c_api_untuned.txt");
  opsched_runtime_options o;
  opsched_runtime_options_init(&o);
  o.device_type = OPSCHED_CPU;
  o.record_untuned_file = file.c_str();
  opsched_runtime* rt = nullptr;
  ASSERT_EQ(opsched_runtime_create(&o, &rt), OPSCHED_OK) << opsched_last_error();
  std::vector<float> x(24, 1.0f), y(4, -1.0f);
  const int64_t x_shape[] = {4, 6}, y_shape[] = {4};
  const int64_t axes[] = {1};
  const opsched_tensor tx{x.data(), OPSCHED_F32, 2, x_shape, nullptr, OPSCHED_CPU, 0};
  const opsched_tensor ty{y.data(), OPSCHED_F32, 1, y_shape, nullptr, OPSCHED_CPU, 0};
  for (int i = 0; i < 2; ++i) {
    ASSERT_EQ(opsched_reduce(rt, &tx, &ty, axes, 1, OPSCHED_REDUCE_SUM, 0, nullptr), OPSCHED_OK) << opsched_last_error();
  }
  EXPECT_EQ(y[3], 6.0f);
  opsched_runtime_destroy(rt);
  const std::string bytes = testing::ReadBytes(file);
  const size_t at = bytes.find("\nreduce x=f32[4,6] axes=1 ");
  EXPECT_NE(at, std::string::npos) << bytes;
  EXPECT_EQ(bytes.find("\nreduce", at + 1), std::string::npos) << "written once: " << bytes;

  // A caller built against version 1 (without the field) is still served.
  opsched_runtime_options_init(&o);
  o.device_type = OPSCHED_CPU;
  o.struct_size = offsetof(opsched_runtime_options, record_untuned_file);
  o.record_untuned_file = "/nonexistent/never-read.txt";  // beyond the caller's struct
  ASSERT_EQ(opsched_runtime_create(&o, &rt), OPSCHED_OK) << opsched_last_error();
  opsched_runtime_destroy(rt);
  // An unusable file is an error at creation.
  opsched_runtime_options_init(&o);
  o.device_type = OPSCHED_CPU;
  o.record_untuned_file = "/nonexistent/folder/untuned.txt";
  ExpectInvalid(opsched_runtime_create(&o, &rt), "record-untuned file");
}

}  // namespace
}  // namespace opsched
