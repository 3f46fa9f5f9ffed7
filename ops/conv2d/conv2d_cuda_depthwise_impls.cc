// The own depthwise/grouped conv2d on the GPU (conv2d_cuda_depthwise.cu) as conv2d and
// conv2d_bias_act implementations: few channels per group, f32/f16/bf16, either layout.
#include <memory>
#include <optional>
#include <string>

#include "core/format.h"
#include "core/gpu/gpu_status.h"
#include "ops/conv2d/conv2d_cuda.h"
#include "ops/conv2d/conv2d_def.h"
#include "ops/conv2d/conv2d_register.h"
#include "registry/knobs.h"
#include "registry/registry.h"

namespace opsched::conv2d {
namespace {

namespace k = gpu_kernels;

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
  ConfigSpace Space(const Workload& w, const Target&) const override { return KnobsOf(w).Space(); }
  StatusOr<std::unique_ptr<Prepared>> Prepare(const Workload& w, const Config& config, const Target&) const override {
    OPSCHED_ASSIGN_OR_RETURN(const k::DepthwiseConfig c, KnobsOf(w).Parse(config));
    return MakePrepared(0, [this, p = MakeProblem(w), c](const PreparedArgs& a) {
      return gpu::ToStatus(k::LaunchDepthwise(WithTensors(p, a.tensors), c, static_cast<gpuStream_t>(a.stream.native())),
                           "depthwise conv2d", name());
    });
  }
  Status Run(const RunArgs& a) const override { return PrepareAndRun(*this, a); }

 private:
  // nchw: rows 0 runs the direct kernel (pixels per thread, block, and `filters` of a
  // group per thread where the group has several: conv2d_cuda_grouped.cu), else
  // shared-memory tiles of rows x columns outputs; nhwc: `vector` channels per thread.
  // `filters` defaults to 1, the kernel that records without the knob measured.
  static Knobs<k::DepthwiseConfig> KnobsOf(const Workload& w) {
    using C = k::DepthwiseConfig;
    const Problem p = MakeProblem(w);
    auto fits = [p](const C& c) { return k::DepthwiseFits(p, c); };
    C defaults;
    defaults.pixels = 4;
    defaults.block = 256;
    if (p.layout == Layout::kNchw) {
      defaults.rows = 0;
      defaults.columns = p.q <= 8 ? 8 : p.q <= 16 ? 16 : 32;
      defaults.vector = 1;
      Knobs<C> knobs(defaults);
      knobs.Int("rows", &C::rows, {0, 8, 16, 32})
          .Int("columns", &C::columns, {8, 16, 32})
          .Int("pixels", &C::pixels, {1, 2, 4, 8})
          .Int("block", &C::block, {64, 128, 256, 512})
          .Int("filters", &C::filters, {1, 2, 4, 8})
          .Constrain("direct: one columns value; tiles: one pixels, block and filters value",
                     [columns = defaults.columns](const C& c) {
                       return c.rows == 0 ? c.columns == columns : c.pixels == 4 && c.block == 256 && c.filters == 1;
                     })
          .Constrain("the tile's input window fits shared memory, the grid fits; filters divide K/G (3x3)", fits);
      return knobs;
    }
    // Preferred: 16-byte channel vectors where one filter per channel allows them.
    defaults.vector = 1;
    for (int v : {8, 4, 2}) {
      C c;
      c.vector = v;
      if (v * ElementBytes(p.type) <= 16 && k::DepthwiseFits(p, c)) {
        defaults.vector = v;
        break;
      }
    }
    Knobs<C> knobs(defaults);
    knobs.Int("vector", &C::vector, {1, 2, 4, 8})
        .Int("pixels", &C::pixels, {1, 2, 4, 8})
        .Int("block", &C::block, {64, 128, 256, 512})
        .Constrain("vectors need one filter per channel and aligned contiguous channels", fits);
    return knobs;
  }
  bool fused_;
};

// The staged depthwise kernels: one filter per channel, a square 3x3/5x5/7x7 filter at
// stride 1 or 2. Two implementations, one per layout, since they are two kernels with
// their own knobs (a selector model learns each apart): *_cuda_depthwise_staged
// (conv2d_cuda_depthwise_staged.cu, nchw) and *_cuda_depthwise_staged_nhwc
// (conv2d_cuda_depthwise_nhwc_staged.cu).
class Conv2dCudaDepthwiseStaged : public Implementation {
 public:
  Conv2dCudaDepthwiseStaged(bool fused, Layout layout)
      : fused_(fused),
        layout_(layout),
        name_(fmt::format("{}_cuda_depthwise_staged{}", fused ? "conv2d_bias_act" : "conv2d",
                          layout == Layout::kNhwc ? "_nhwc" : "")) {}
  std::string_view op() const override { return fused_ ? "conv2d_bias_act" : "conv2d"; }
  std::string_view name() const override { return name_; }
  DeviceKind device_kind() const override { return DeviceKind::kCuda; }
  ImplementationTraits traits() const override { return {.deterministic = true}; }
  Status Applicable(const Workload& w, const Target& t) const override {
    const Problem p = MakeProblem(w);
    const bool nhwc = layout_ == Layout::kNhwc;
    if (p.layout != layout_ || p.groups != p.c || p.k != p.c) {
      return absl::InvalidArgumentError(
          fmt::format("serves {} depthwise layers: groups = C = K", nhwc ? "nhwc" : "nchw"));
    }
    if (k::UnrolledFilter(p) == 0) {
      return absl::InvalidArgumentError("needs a square 3x3, 5x5 or 7x7 filter at stride 1 or 2, dilation 1");
    }
    if (Space(w, t).Enumerate(1).empty()) {
      return absl::InvalidArgumentError(fmt::format("needs {} within {} KiB of shared memory",
                                                    nhwc ? "a tile's input window" : "x contiguous and a tile's input rows",
                                                    k::kDepthwiseMaxSharedBytes / 1024));
    }
    return absl::OkStatus();
  }
  ConfigSpace Space(const Workload& w, const Target& t) const override { return KnobsOf(w, t).Space(); }
  StatusOr<std::unique_ptr<Prepared>> Prepare(const Workload& w, const Config& config, const Target& t) const override {
    OPSCHED_ASSIGN_OR_RETURN(const k::DepthwiseStagedConfig c, KnobsOf(w, t).Parse(config));
    return MakePrepared(0, [this, p = MakeProblem(w), c](const PreparedArgs& a) {
      const Problem run = WithTensors(p, a.tensors);
      const auto stream = static_cast<gpuStream_t>(a.stream.native());
      return gpu::ToStatus(layout_ == Layout::kNhwc ? k::LaunchDepthwiseNhwcStaged(run, c, stream)
                                                    : k::LaunchDepthwiseStaged(run, c, stream),
                           "staged depthwise conv2d", name());
    });
  }
  std::optional<LaunchShape> MainLaunch(const Workload& w, const Config& config, const Target& t) const override {
    StatusOr<k::DepthwiseStagedConfig> c = KnobsOf(w, t).Parse(config);
    if (!c.ok()) return std::nullopt;
    const Problem p = MakeProblem(w);
    const LaunchShape s =
        layout_ == Layout::kNhwc ? k::DepthwiseNhwcStagedLaunch(p, *c) : k::DepthwiseStagedLaunch(p, *c);
    return s.blocks > 0 ? std::optional<LaunchShape>(s) : std::nullopt;
  }
  Status Run(const RunArgs& a) const override { return PrepareAndRun(*this, a); }

 private:
  // nchw: k::DepthwiseStagedConfig's defaults (tiles of 64 rows, strips of 4), but tiles
  // of 32 or 16 rows while the grid would have fewer than 4 blocks an SM. At batch 1 a
  // 56x56 layer of 144 channels is 144 whole-plane blocks: 1.44x the best staged config
  // in the H100 grid of 2026-11-28 (bench/suites/models/train.txt's batch-1 lines), tiles
  // of 16 rows (576 blocks) 1.08x; served by the rule, 10.4 -> 8.4 us. The layers tuned
  // at batch 16 and more have thousands of blocks and keep the default. (Strips of 2 rows
  // where a block takes one 7x7 or 14x14 plane, and its 128 threads have 14 or 56 strips
  // of 4 rows, measured 1.00-1.04x the best in that grid against 1.05-1.11x, but the same
  // as strips of 4 when served: -3% to +6% on the six such layers. Not taken.)
  static k::DepthwiseStagedConfig NchwDefaults(const Problem& p, const Target& t) {
    k::DepthwiseStagedConfig c;
    const int64_t enough = 4 * int64_t(t.sm_count);
    while (c.rows > 16 && k::DepthwiseStagedLaunch(p, c).blocks < enough) c.rows /= 2;
    return c;
  }

  // The nhwc tile extents over `outputs` rows or columns of the output, ascending: 4, 8,
  // 16 and 32, and the extents from 5 to 32 that split `outputs` into whole tiles (56: 7,
  // 14 and 28; 112: 7, 14 and 28; 7: 7). Tiles of a power of two overhang maps of 7, 14,
  // 28, 56 and 112 pixels: 16 x 32 tiles of a 56 x 56 map compute 64 x 64 outputs, 23% of
  // them outside it.
  static std::vector<int64_t> TileExtents(int64_t outputs) {
    std::vector<int64_t> extents;
    for (int64_t extent = 4; extent <= 32; ++extent) {
      const bool power_of_two = (extent & (extent - 1)) == 0;
      if (power_of_two || (outputs > 0 && outputs % extent == 0)) extents.push_back(extent);
    }
    return extents;
  }

  // Preferred: nchw, NchwDefaults; nhwc, 8 x 16 tiles of strips of
  // 8 rows in blocks of 128 threads (on the 11 channels-last layers tuned on the H100, the
  // config nearest the best on geomean: 1.06x, at worst 1.21x); or the closest that fits.
  Knobs<k::DepthwiseStagedConfig> KnobsOf(const Workload& w, const Target& t) const {
    using C = k::DepthwiseStagedConfig;
    const Problem p = MakeProblem(w);
    if (layout_ == Layout::kNhwc) {
      C defaults;
      defaults.rows = 8;
      defaults.columns = 16;
      defaults.rows_per_thread = 8;
      Knobs<C> knobs(defaults);
      knobs.Int("rows", &C::rows, TileExtents(p.p))
          .Int("columns", &C::columns, TileExtents(p.q))
          .Int("rows_per_thread", &C::rows_per_thread, {1, 2, 4, 8})
          .Int("block", &C::block, {128, 256, 512})
          .Int("channels", &C::channels, {32, 16})
          .Constrain("rows_per_thread divides rows; the tile's input window fits shared memory",
                     [p](const C& c) { return k::DepthwiseNhwcStagedFits(p, c); });
      return knobs;
    }
    Knobs<C> knobs(NchwDefaults(p, t));
    knobs.Int("rows", &C::rows, {4, 8, 16, 32, 64})
        .Int("rows_per_thread", &C::rows_per_thread, {1, 2, 4})
        .Int("columns_per_thread", &C::columns_per_thread, {1, 2})
        .Int("block", &C::block, {128, 256, 512})
        .Constrain("rows_per_thread divides rows; the staged rows fit shared memory",
                   [p](const C& c) { return k::DepthwiseStagedFits(p, c); });
    return knobs;
  }
  bool fused_;
  Layout layout_;
  std::string name_;
};

}  // namespace

Status RegisterCudaDepthwiseImpls(Registry& registry) {
  OPSCHED_RETURN_IF_ERROR(registry.AddImplementation(std::make_unique<Conv2dCudaDepthwise>(false)));
  OPSCHED_RETURN_IF_ERROR(registry.AddImplementation(std::make_unique<Conv2dCudaDepthwise>(true)));
  for (const Layout layout : {Layout::kNchw, Layout::kNhwc}) {
    for (const bool fused : {false, true}) {
      OPSCHED_RETURN_IF_ERROR(registry.AddImplementation(std::make_unique<Conv2dCudaDepthwiseStaged>(fused, layout)));
    }
  }
  return absl::OkStatus();
}

}  // namespace opsched::conv2d
