// Every registered implementation reads its knobs through its one declaration (Knobs<T>):
// over the suites' workloads, on the CPU and (where there is one) on the GPU, its default
// config is legal, Prepare takes it, and Prepare refuses a config with a knob the
// implementation does not declare or a value of the wrong type. No implementation reads a
// knob with a fallback of its own, which would accept both.
#include <gtest/gtest.h>

#include <cstdlib>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "core/gpu/gpu_backend.h"
#include "core/target.h"
#include "registry/registry.h"
#include "tests/test_util.h"
#include "tuner/suite.h"

namespace opsched {
namespace {

std::vector<Workload> SuiteWorkloads() {
  const char* root = std::getenv("TEST_SRCDIR");
  std::vector<Workload> workloads;
  for (const char* suite : {"scatter", "reduce", "conv", "pointwise", "pointwise_train", "pointwise_heldout", "dtypes"}) {
    const std::string path = std::string(root ? root : ".") + "/opsched/bench/suites/" + suite + ".txt";
    StatusOr<std::vector<SuiteEntry>> entries = ReadSuite(path, Registry::Global());
    EXPECT_TRUE(entries.ok()) << entries.status();
    if (!entries.ok()) continue;
    for (SuiteEntry& e : *entries) {
      if (e.error.ok()) workloads.push_back(std::move(e.workload));
    }
  }
  // Implementations no suite line reaches: a fused depthwise layer in either layout.
  for (const char* line : {"conv2d_bias_act x=f16[4,32,28,28] w=f16[32,1,3,3] b=f16[32] stride=1,1 pad=1,1 "
                           "dilation=1,1 groups=32 layout=nchw math=fp32 act=relu",
                           "conv2d_bias_act x=f16[4,28,28,32] w=f16[32,3,3,1] b=f16[32] stride=1,1 pad=1,1 "
                           "dilation=1,1 groups=32 layout=nhwc math=fp32 act=relu"}) {
    StatusOr<Workload> w = Registry::Global().ParseCanonical(line);
    EXPECT_TRUE(w.ok()) << w.status();
    if (w.ok()) workloads.push_back(*std::move(w));
  }
  return workloads;
}

// What the checks covered: implementations with knobs, and those seen at all.
struct Coverage {
  std::set<std::string> with_knobs;
  std::set<std::string> seen;
};

// `impl` on `w` and `target`: the checks of the file's comment.
void Check(const Implementation& impl, const Workload& w, const Target& target, Coverage* coverage) {
  const ConfigSpace space = impl.Space(w, target);
  const StatusOr<Config> defaults = impl.DefaultConfig(w, target);
  const std::string where = std::string(impl.name()) + " on " + w.ToString();
  if (space.knobs().empty()) {
    ASSERT_TRUE(defaults.ok()) << where;
    EXPECT_TRUE(defaults->empty()) << where;
  }
  if (!defaults.ok()) return;  // an empty space: nothing legal to prepare
  coverage->seen.insert(std::string(impl.name()));
  OPSCHED_EXPECT_OK(space.Check(*defaults));
  StatusOr<std::unique_ptr<Prepared>> prepared = impl.Prepare(w, *defaults, target);
  // Without a device a vendor library's Prepare (a cuDNN descriptor) cannot finish; its
  // knobs are parsed first all the same.
  const bool needs_device = impl.traits().vendor_library && gpu::DeviceCount() == 0;
  EXPECT_TRUE(prepared.ok() || needs_device) << where << " " << defaults->ToString() << ": " << prepared.status();

  Config unknown = *defaults;
  unknown.Set("no_such_knob", int64_t{1});
  StatusOr<std::unique_ptr<Prepared>> refused = impl.Prepare(w, unknown, target);
  ASSERT_FALSE(refused.ok()) << where << " took " << unknown.ToString();
  EXPECT_EQ(refused.status().code(), absl::StatusCode::kInvalidArgument) << where << ": " << refused.status();
  EXPECT_NE(std::string(refused.status().message()).find("no_such_knob"), std::string::npos)
      << where << ": " << refused.status();
  if (space.knobs().empty()) return;
  coverage->with_knobs.insert(std::string(impl.name()));

  // Every knob given a value of the other type.
  for (const KnobDomain& k : space.knobs()) {
    Config wrong = *defaults;
    if (std::holds_alternative<int64_t>(k.values.front())) {
      wrong.Set(k.name, std::string("wide"));
    } else {
      wrong.Set(k.name, int64_t{3});
    }
    StatusOr<std::unique_ptr<Prepared>> typed = impl.Prepare(w, wrong, target);
    ASSERT_FALSE(typed.ok()) << where << " took " << wrong.ToString();
    EXPECT_EQ(typed.status().code(), absl::StatusCode::kInvalidArgument) << where << ": " << typed.status();
  }
}

void CheckAll(const Target& target, Coverage* coverage) {
  const Registry& registry = Registry::Global();
  for (const Workload& w : SuiteWorkloads()) {
    for (const Implementation* impl : registry.ImplementationsOf(w.op())) {
      if (impl->device_kind() != target.kind || !impl->Applicable(w, target).ok()) continue;
      Check(*impl, w, target, coverage);
    }
  }
}

TEST(ImplementationKnobsTest, CpuImplementationsParseTheirKnobsFromOneDeclaration) {
  Coverage coverage;
  CheckAll(CpuTarget(), &coverage);
  // The CPU implementations with knobs, each seen on some suite line.
  for (const char* name : {"scatter_cpu_parallel", "reduce_cpu_parallel", "conv2d_cpu_direct", "conv2d_cpu_im2col_gemm",
                           "conv2d_backward_cpu_direct", "pointwise_cpu_interpreted", "pointwise_cpu_unfused",
                           "pointwise_cpu_specialised", "pointwise_cpu_hoisted", "pointwise_cpu_batchnorm"}) {
    EXPECT_EQ(coverage.with_knobs.count(name), 1u) << name;
  }
}

TEST(ImplementationKnobsTest, GpuImplementationsParseTheirKnobsFromOneDeclaration) {
  OPSCHED_REQUIRE_GPU();
  StatusOr<Target> target = QueryTarget(Device{gpu::BackendKind(), 0});
  ASSERT_TRUE(target.ok()) << target.status();
  Coverage coverage;
  CheckAll(*target, &coverage);
  int gpu_impls = 0;
  for (const OpDef* op : Registry::Global().ops()) {
    for (const Implementation* impl : Registry::Global().ImplementationsOf(op->name())) {
      if (impl->device_kind() != target->kind) continue;
      ++gpu_impls;
      EXPECT_EQ(coverage.seen.count(std::string(impl->name())), 1u) << impl->name() << " met no suite line";
    }
  }
  EXPECT_GE(gpu_impls, 30);
  EXPECT_GE(coverage.with_knobs.size(), 25u);
}

// Without a device (CI): the GPU implementations' spaces and Prepare do their host part
// all the same, for a described H100 (the cuDNN ones, whose spaces come from the device,
// have none there and are left out).
TEST(ImplementationKnobsTest, GpuImplementationsDeclareTheirKnobsWithoutADevice) {
  if (gpu::DeviceCount() > 0) GTEST_SKIP() << "a GPU is present: the test above checks its implementations";
  Target h100;
  h100.kind = DeviceKind::kCuda;
  h100.device_name = "NVIDIA H100 80GB HBM3";
  h100.arch = "sm_90";
  h100.sm_count = 132;
  Coverage coverage;
  CheckAll(h100, &coverage);
  if (coverage.seen.empty()) GTEST_SKIP() << "this build registers no GPU implementation (CPU-only or sanitizer build)";
  for (const char* name : {"scatter_cuda_parallel", "scatter_cuda_slice", "reduce_cuda_rows", "reduce_cuda_staged",
                           "reduce_cuda_integer", "conv2d_cuda_direct", "conv2d_cuda_depthwise",
                           "conv2d_backward_cuda_gemm", "pointwise_cuda_interpreted", "pointwise_cuda_specialised",
                           "pointwise_cuda_hoisted", "pointwise_cuda_batchnorm"}) {
    EXPECT_EQ(coverage.with_knobs.count(name), 1u) << name;
  }
}

}  // namespace
// The vendor libraries each implementation says it calls decide which records of other
// library versions hold for it (records::Database::SetLibraryUse): every cuDNN
// implementation says cuDNN and cuBLAS (cuDNN may call cuBLASLt), the cuBLAS GEMMs say
// cuBLAS, and every other implementation neither, so that its records hold in a process
// that loaded another cuDNN.
TEST(LibraryUseTest, EveryImplementationNamesTheVendorLibrariesItCalls) {
  const Registry& registry = Registry::Global();
  const std::set<std::string> cublas_gemms = {"conv2d_cuda_im2col_gemm", "conv2d_bias_act_cuda_im2col_gemm",
                                              "conv2d_backward_cuda_gemm"};
  int cudnn = 0, cublas = 0, own = 0;
  for (const OpDef* op : registry.ops()) {
    for (const Implementation* impl : registry.ImplementationsOf(op->name())) {
      const std::string name(impl->name());
      const ImplementationTraits t = impl->traits();
      const bool calls_cudnn = name.find("cudnn") != std::string::npos;
      EXPECT_EQ(t.uses_cudnn, calls_cudnn) << name;
      EXPECT_EQ(t.uses_cublas, calls_cudnn || cublas_gemms.count(name) > 0) << name;
      if (t.uses_cudnn || t.uses_cublas) {
        EXPECT_TRUE(t.vendor_library) << name;
      }
      const LibraryUse use = registry.LibraryUseOf(name);
      EXPECT_EQ(use.cudnn, t.uses_cudnn) << name;
      EXPECT_EQ(use.cublas, t.uses_cublas) << name;
      (calls_cudnn ? cudnn : t.uses_cublas ? cublas : own)++;
    }
  }
  if (gpu::BackendKind() == DeviceKind::kCuda) {
    EXPECT_GE(cudnn, 8);
    EXPECT_EQ(cublas, 3);
  }
  EXPECT_GT(own, 10);
  const LibraryUse unknown = registry.LibraryUseOf("no_such_implementation");
  EXPECT_TRUE(unknown.cudnn && unknown.cublas);
}

}  // namespace opsched
