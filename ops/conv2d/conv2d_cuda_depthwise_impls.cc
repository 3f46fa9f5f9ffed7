// The own depthwise/grouped conv2d on the GPU (conv2d_cuda_depthwise.cu) as conv2d and
// conv2d_bias_act implementations: few channels per group, f32/f16/bf16, either layout.
#include <memory>

#include "core/format.h"
#include "core/gpu/gpu_status.h"
#include "ops/conv2d/conv2d_cuda.h"
#include "ops/conv2d/conv2d_def.h"
#include "ops/conv2d/conv2d_register.h"
#include "registry/registry.h"

namespace opsched::conv2d {
namespace {

namespace k = gpu_kernels;

k::DepthwiseConfig ConfigOf(const Config& c) {
  k::DepthwiseConfig d;
  d.rows = static_cast<int>(c.GetInt("rows", d.rows));
  d.columns = static_cast<int>(c.GetInt("columns", d.columns));
  d.vector = static_cast<int>(c.GetInt("vector", d.vector));
  d.pixels = static_cast<int>(c.GetInt("pixels", d.pixels));
  d.block = static_cast<int>(c.GetInt("block", d.block));
  return d;
}

class Conv2dCudaDepthwise : public Implementation {
 public:
  explicit Conv2dCudaDepthwise(bool fused) : fused_(fused) {}
  std::string_view op() const override { return fused_ ? "conv2d_bias_act" : "conv2d"; }
  std::string_view name() const override {
    return fused_ ? "conv2d_bias_act_cuda_depthwise" : "conv2d_cuda_depthwise";
  }
  DeviceKind device_kind() const override { return DeviceKind::kCuda; }
  ImplementationTraits traits() const override { return {.deterministic = true}; }
  Status Applicable(const Workload& w, const Target& t) const override {
    const Problem p = MakeProblem(w);
    if (p.groups < 1 || p.c % p.groups != 0 || p.k % p.groups != 0) {
      return absl::InvalidArgumentError("needs C and K divisible by groups");
    }
    if (p.c / p.groups > k::kDepthwiseMaxChannelsPerGroup) {
      return absl::InvalidArgumentError(fmt::format("C/G = {} > {}: for depthwise and grouped layers with few channels per group",
                                                    p.c / p.groups, k::kDepthwiseMaxChannelsPerGroup));
    }
    if (Space(w, t).Enumerate(1).empty()) {
      return absl::InvalidArgumentError(fmt::format(
          "no tile fits: the input window exceeds {} KiB of shared memory, or the grid or an index exceeds its limit",
          k::kDepthwiseMaxSharedBytes / 1024));
    }
    return absl::OkStatus();
  }
  ConfigSpace Space(const Workload& w, const Target&) const override {
    const Problem p = MakeProblem(w);
    auto fits = [p](const Config& c) { return k::DepthwiseFits(p, ConfigOf(c)); };
    if (p.layout == Layout::kNchw) {
      // rows 0: the direct kernel (pixels, block); else shared-memory tiles (columns).
      const int64_t columns = p.q <= 8 ? 8 : p.q <= 16 ? 16 : 32;
      return ConfigSpace()
          .AddInts("rows", {0, 8, 16, 32}, 0)
          .AddInts("columns", {8, 16, 32}, columns)
          .AddInts("pixels", {1, 2, 4, 8}, 4)
          .AddInts("block", {64, 128, 256, 512}, 256)
          .Constrain("direct: one columns value; tiles: one pixels and block value",
                     [columns](const Config& c) {
                       return c.GetInt("rows", 0) == 0 ? c.GetInt("columns", 0) == columns
                                                       : c.GetInt("pixels", 0) == 4 && c.GetInt("block", 0) == 256;
                     })
          .Constrain("the tile's input window fits shared memory, the grid fits", fits);
    }
    // Preferred: 16-byte channel vectors where one filter per channel allows them.
    int64_t vector = 1;
    for (int64_t v : {8, 4, 2}) {
      k::DepthwiseConfig c;
      c.vector = static_cast<int>(v);
      if (v * ElementBytes(p.type) <= 16 && k::DepthwiseFits(p, c)) {
        vector = v;
        break;
      }
    }
    return ConfigSpace()
        .AddInts("vector", {1, 2, 4, 8}, vector)
        .AddInts("pixels", {1, 2, 4, 8}, 4)
        .AddInts("block", {64, 128, 256, 512}, 256)
        .Constrain("vectors need one filter per channel and aligned contiguous channels", fits);
  }
  StatusOr<std::unique_ptr<Prepared>> Prepare(const Workload& w, const Config& config, const Target&) const override {
    return MakePrepared(0, [this, p = MakeProblem(w), c = ConfigOf(config)](const PreparedArgs& a) {
      return gpu::ToStatus(k::LaunchDepthwise(WithTensors(p, a.tensors), c, static_cast<gpuStream_t>(a.stream.native())),
                           "depthwise conv2d", name());
    });
  }
  Status Run(const RunArgs& a) const override { return PrepareAndRun(*this, a); }

 private:
  bool fused_;
};

}  // namespace

Status RegisterCudaDepthwiseImpls(Registry& registry) {
  OPSCHED_RETURN_IF_ERROR(registry.AddImplementation(std::make_unique<Conv2dCudaDepthwise>(false)));
  OPSCHED_RETURN_IF_ERROR(registry.AddImplementation(std::make_unique<Conv2dCudaDepthwise>(true)));
  return absl::OkStatus();
}

}  // namespace opsched::conv2d
