// The conv2d family's strategies: which implementation and config to use without
// records. A rule whose implementation does not apply (f16 for own kernels, a cuDNN
// algorithm this shape does not support, ...) passes to the next; an illegal default
// config becomes the closest legal one.
//
// conv2d and conv2d_bias_act (same table, the op's own implementation names):
//  priority  implementation                    when                                    default config
//  50        *_cuda_direct                     C*R*S <= 64, groups 1, a filter wider   block=128, channels_per_thread=K up to 8
//                                              than 1x1 (few channels: the C=1 first
//                                              layer of an MNIST net)
//  49        *_cuda_depthwise_staged           nchw, groups = C = K (depthwise), a     its default: rows=64
//                                              square 3x3/5x5/7x7 filter at stride 1   rows_per_thread=4 block=128
//                                              or 2 (MobileNet, EfficientNet)          (rows=32 or 16 below 4 blocks
//                                                                                      an SM: batch 1 of a large map)
//  49        *_cuda_depthwise_staged_nhwc      the same layers channels-last (and      its default: rows=8 columns=16
//                                              ConvNeXt's 7x7)                         rows_per_thread=8 block=128
//  49        *_cuda_depthwise                  f16 or bf16, groups = C (depthwise)     its default
//  49        *_cuda_direct                     f32 nchw grouped, 1 < G < C, C/G <= 16, block=256 channels_per_thread=8
//                                              3x3 at stride 1 or 2 (ResNeXt, RegNet),
//                                              K/G >= 8
//  49        *_cuda_depthwise                  the same grouped layers with K/G even:  rows=0 filters=K/G up to 8
//                                              f32 with K/G < 8, f16/bf16 with C/G     pixels=4 block=256
//                                              <= 4 (with more, cuDNN's tensor cores)
//  48        *_cuda_im2col_gemm                1x1, stride 1, no padding, dilation 1,  images=N (the closest legal count)
//                                              groups 1 (f32 nchw: a batched GEMM)
//  47        *_cuda_im2col_gemm                1-4 images, C/G*R*S >= 1024, N*P*Q      images=N where P*Q >= 2048,
//                                              <= 16384 (a GEMM of a deep reduction    else 1
//                                              per image or two: a batch-1 layer,
//                                              atrous, a detection or U-Net map)
//  45        conv2d_cudnn / _bias_act_cudnn    f32, 3x3, stride 1, dilation 1, groups  algo=winograd_nonfused
//                                              1, C and K >= 32, N >= 8, P*Q <= 3136
//                                              (ResNet 3x3 layers at training batch)
//  40        conv2d_cudnn / _bias_act_cudnn    any GPU workload (relu or identity for  algo=implicit_precomp_gemm
//                                              the fused bias + activation)
//  35        conv2d_bias_act_cudnn_unfused     conv2d_bias_act (sigmoid, tanh)         algo=implicit_precomp_gemm
//  30        *_cuda_implicit_gemm              any GPU workload (f32)                  its default: tile=128x64
//  20        *_cuda_im2col_gemm                any GPU workload (f32)                  its default: images=1
//  20        *_cpu_im2col_gemm                 CPU, >= 2^20 multiply-adds              its default: threads=all
//  10        *_cpu_direct                      CPU                                     its default: threads=all
//
// conv2d_backward:
//  45        conv2d_backward_cudnn_deterministic  3x3, stride 1, dilation 1, groups 1  data_algo=filter_algo=winograd_nonfused streams=1
//  40        conv2d_backward_cudnn             any GPU workload                        data_algo=algo_1 filter_algo=algo_1 streams=1
//  35        conv2d_backward_cudnn_deterministic  (deterministic dispatch)             the same
//  30        conv2d_backward_cuda_gemm         any GPU workload (f32)                  its default: images=1 streams=1
//  20        conv2d_backward_cpu_im2col_gemm   CPU, >= 2^20 multiply-adds              its default: threads=all
//  10        conv2d_backward_cpu_direct        CPU                                     its default: threads=all
//
// Two streams cost a second workspace (MXNet #14006): without a record the backward
// runs on one stream; the tuner picks two where they pay, under --memory-budget.
// The Winograd rules come from the H100 records (bench/records/nvidia-h100/conv.log):
// on ResNet's 3x3 layers winograd_nonfused takes 103-154 us forward against 233-331 us
// for implicit_precomp_gemm, and 213-230 us backward (one stream) against 554-809 us
// for algo_1/algo_1, at 45-111 MiB of workspace; on the 16-channel MNIST layer the
// forward keeps implicit_precomp_gemm (16 us against 30 us). The same records bound
// Winograd: it loses below 8 images or above 56x56 outputs (1.29-2.63x the best at
// N=1-4 and on 8x64x224x224), and in bf16 (3.1x, where tensor-core GEMMs run; the one
// 16-bit layer where it was measured, so the rule's `fits` keeps a model's prediction of
// Winograd off 16-bit data too); there implicit_precomp_gemm is within
// 2% of the best, or the own im2col GEMM is the best (a 1x512x7x7 3x3 layer: 28 us against
// 75 for Winograd and 161 for implicit_precomp_gemm; an atrous 4x2048x33x33 layer: 1456
// against 1812 us for implicit_precomp_gemm). The records of bench/suites/models/train.txt
// (H100, 2026-11-27) bound its N*P*Q: the im2col GEMM wins at 6800 (Mask R-CNN's P4 map at
// batch 2: 290 us over both images, 318 one at a time, 332 for implicit_precomp_gemm) and
// loses at 27200 (P3: 1121 against 1029 for cuDNN), so the bound is 16384 (4608 before,
// the largest then measured); over both images where a map has 2048 outputs or more (P4,
// 3400), one at a time below (32x32 at batch 2: 283 against 313 us; 33x33 at batch 4: 1456
// against 1787). On every 1x1 layer of those records (f32
// nchw, 6 layers) the im2col GEMM over all images is the best or within 8% of it, where
// implicit_precomp_gemm takes 1.9-4.5x on the 5 plain ones (1.05x fused with bias+relu)
// and the direct kernel 1.7-2.7x. On their f32
// depthwise layers (5) implicit_precomp_gemm is within 3% of the best and the direct
// kernel 2.0-3.0x; on the f16/bf16 depthwise ones where it was measured (4 of 5) the own
// depthwise kernel is the best. The grouped rules (H200, 2026-11-29, train.txt's four
// grouped layers and dtypes.txt's one; every config of the own depthwise kernel, 48 xgb
// trials of every implementation): its grouped config is within 1.04x of the kernel's best
// on each (1.02x geomean; filters 4 and 8 at runs of 4 pixels), where one filter a thread
// took 1.8-2.6x; it is the best of all on the f32 layer of 4 filters a group (ResNeXt-50
// layer1: 106.6 us, the direct kernel 155.7, cuDNN 468) and the bf16 one (29.5 us, cuDNN
// 32.2). On the f32 layer of 8 (RegNetX-200MF) the direct kernel, 8 filters a thread with
// the group's filters in shared memory, is the best (35.6 us against 47.1), and so on the
// three f32 ResNeXt layers of 8 and 16 filters a group added to train.txt (h120: 53.5, 36.4
// and 26.4 us; the own depthwise kernel's best 79.5, 54.3 and 31.7; cuDNN's pick 104.5,
// 505 and 68.5), where the rule's config takes 1.16x, 1.21x and 1.01x the best (8 filters
// a thread; 16 was the best on the two layers of 16 a group, but it halves the grid of a
// small layer). cuDNN's implicit_precomp_gemm wins the 16-bit layers of 8 and 16 channels
// a group (86 against 94 us, 22 against 49: tensor cores), so no own rule takes those.
#include <algorithm>
#include <string>

#include "ops/conv2d/conv2d_def.h"
#include "registry/registry.h"
#include "strategies/strategies_register.h"

namespace opsched {
namespace {

using conv2d::Kind;
using conv2d::MakeProblem;

double MultiplyAdds(const Workload& w) {
  const conv2d::Problem p = MakeProblem(w);
  return static_cast<double>(p.n) * p.k * p.p * p.q * p.reduction_length();
}

bool Large(const Workload& w, const Target& t) { return OnCpu(t) && MultiplyAdds(w) >= (1 << 20); }

// The shapes cuDNN's Winograd algorithms are made for: 3x3 windows, stride and
// dilation 1, no groups.
bool Winograd3x3(const conv2d::Problem& p) {
  return p.r == 3 && p.s == 3 && p.stride_h == 1 && p.stride_w == 1 && p.dil_h == 1 && p.dil_w == 1 &&
         p.groups == 1;
}
// A 1x1 convolution that is one GEMM per image: no stride, padding, dilation or groups.
bool Pointwise1x1(const conv2d::Problem& p) {
  return p.r == 1 && p.s == 1 && p.stride_h == 1 && p.stride_w == 1 && p.pad_h == 0 && p.pad_w == 0 &&
         p.dil_h == 1 && p.dil_w == 1 && p.groups == 1;
}
bool Gpu(const Workload&, const Target& t) { return OnGpu(t); }
// A depthwise layer (groups = C = K > 1) of `layout` on the GPU.
auto DepthwiseOnGpu(conv2d::Layout layout) {
  return [layout](const Workload& w, const Target& t) {
    const conv2d::Problem p = MakeProblem(w);
    return OnGpu(t) && p.layout == layout && p.groups == p.c && p.k == p.c && p.groups > 1;
  };
}

// A grouped layer of the own grouped kernels' kind: nchw, 1 < G < C, C/G <= 16, a 3x3
// filter at stride 1 or 2, dilation 1 (ResNeXt, RegNet).
bool GroupedLayer(const conv2d::Problem& p) {
  return p.layout == conv2d::Layout::kNchw && p.groups > 1 && p.groups < p.c && p.c / p.groups <= 16 && p.r == 3 &&
         p.s == 3 && p.stride_h == p.stride_w && p.stride_h <= 2 && p.dil_h == 1 && p.dil_w == 1;
}

Config Algo(const char* algo) {
  Config c;
  c.Set("algo", std::string(algo));
  return c;
}

std::unique_ptr<Strategy> MakeForwardStrategy(Kind kind) {
  const std::string op(conv2d::OpName(kind));
  std::vector<StrategyRule> rules = {
      {50, op + "_cuda_direct", "C*R*S <= 64 (few channels), no groups, a filter wider than 1x1",
       [](const Workload& w, const Target& t) {
         const conv2d::Problem p = MakeProblem(w);
         return OnGpu(t) && p.reduction_length() <= 64 && p.r * p.s > 1 && p.groups == 1;
       },
       [](const Workload& w, const Target&) {
         Config c;
         c.Set("block", 128);
         c.Set("channels_per_thread", std::min<int64_t>(8, MakeProblem(w).filters_per_group()));
         return c;
       }},
      {49, op + "_cuda_depthwise_staged", "nchw depthwise (groups = C = K); it applies to square 3x3, 5x5, 7x7 "
       "filters at stride 1 or 2",
       DepthwiseOnGpu(conv2d::Layout::kNchw), nullptr},
      {49, op + "_cuda_depthwise_staged_nhwc", "nhwc depthwise (groups = C = K); it applies to square 3x3, 5x5, "
       "7x7 filters at stride 1 or 2",
       DepthwiseOnGpu(conv2d::Layout::kNhwc), nullptr},
      {49, op + "_cuda_depthwise", "f16 or bf16 depthwise (groups = C)",
       [](const Workload& w, const Target& t) {
         const conv2d::Problem p = MakeProblem(w);
         return OnGpu(t) && p.type != conv2d::ElementType::kF32 && p.groups == p.c && p.groups > 1;
       },
       nullptr},
      {49, op + "_cuda_direct", "f32 nchw grouped 3x3 (GroupedLayer), K/G >= 8",
       [](const Workload& w, const Target& t) {
         const conv2d::Problem p = MakeProblem(w);
         return OnGpu(t) && GroupedLayer(p) && p.type == conv2d::ElementType::kF32 && p.filters_per_group() >= 8;
       },
       [](const Workload&, const Target&) {
         Config c;
         c.Set("block", 256);
         c.Set("channels_per_thread", 8);
         return c;
       }},
      {49, op + "_cuda_depthwise", "nchw grouped 3x3 (GroupedLayer), K/G even: f32 K/G < 8, f16/bf16 C/G <= 4",
       [](const Workload& w, const Target& t) {
         const conv2d::Problem p = MakeProblem(w);
         const bool f32 = p.type == conv2d::ElementType::kF32;
         return OnGpu(t) && GroupedLayer(p) && p.filters_per_group() % 2 == 0 &&
                (f32 ? p.filters_per_group() < 8 : p.c / p.groups <= 4);
       },
       [](const Workload& w, const Target&) {  // every knob, as the tuner records it
         const conv2d::Problem p = MakeProblem(w);
         const int64_t kg = p.filters_per_group();
         Config c;
         c.Set("block", 256);
         c.Set("columns", p.q <= 8 ? 8 : p.q <= 16 ? 16 : 32);  // the direct kernel's one value
         c.Set("filters", kg % 8 == 0 ? 8 : kg % 4 == 0 ? 4 : 2);
         c.Set("pixels", 4);
         c.Set("rows", 0);
         return c;
       }},
      {48, op + "_cuda_im2col_gemm", "1x1, stride 1, no padding, groups 1",
       [](const Workload& w, const Target& t) { return OnGpu(t) && Pointwise1x1(MakeProblem(w)); },
       [](const Workload& w, const Target&) {
         Config c;
         c.Set("images", MakeProblem(w).n);
         return c;
       }},
      {47, op + "_cuda_im2col_gemm", "1-4 images, C/G*R*S >= 1024, N*P*Q <= 16384",
       [](const Workload& w, const Target& t) {
         const conv2d::Problem p = MakeProblem(w);
         return OnGpu(t) && p.n <= 4 && p.reduction_length() >= 1024 && p.n * p.p * p.q <= 16384;
       },
       [](const Workload& w, const Target&) {
         const conv2d::Problem p = MakeProblem(w);
         Config c;
         c.Set("images", p.p * p.q >= 2048 ? p.n : 1);
         return c;
       }},
      {45, op + "_cudnn", "f32, 3x3, stride 1, dilation 1, groups 1, C and K >= 32, N >= 8, P*Q <= 3136",
       [](const Workload& w, const Target& t) {
         const conv2d::Problem p = MakeProblem(w);
         return OnGpu(t) && Winograd3x3(p) && p.type == conv2d::ElementType::kF32 && p.c >= 32 && p.k >= 32 && p.n >= 8 &&
                p.p * p.q <= 3136;
       },
       [](const Workload&, const Target&) { return Algo("winograd_nonfused"); },
       "its Winograd algorithms: f32 data",
       [](const Workload& w, const Target&, const Config& c) {
         const StatusOr<std::string_view> algo = c.GetString("algo");
         return !algo.ok() || algo->find("winograd") == std::string_view::npos ||
                MakeProblem(w).type == conv2d::ElementType::kF32;
       }},
      {40, op + "_cudnn", "any GPU workload", Gpu,
       [](const Workload&, const Target&) { return Algo("implicit_precomp_gemm"); }},
      {30, op + "_cuda_implicit_gemm", "any GPU workload (f32)", Gpu, nullptr},
      {20, op + "_cuda_im2col_gemm", "any GPU workload (f32)", Gpu, nullptr},
      {20, op + "_cpu_im2col_gemm", "CPU, >= 2^20 multiply-adds", Large, nullptr},
      {10, op + "_cpu_direct", "CPU", [](const Workload&, const Target& t) { return OnCpu(t); }, nullptr},
  };
  if (kind == Kind::kBiasActivation) {
    rules.push_back({35, "conv2d_bias_act_cudnn_unfused", "any GPU workload (sigmoid, tanh)", Gpu,
                     [](const Workload&, const Target&) { return Algo("implicit_precomp_gemm"); }});
  }
  return std::make_unique<Strategy>(op, std::move(rules));
}

std::unique_ptr<Strategy> MakeBackwardStrategy() {
  auto cudnn_default = [](const Workload&, const Target&) {
    Config c;
    c.Set("data_algo", std::string("algo_1"));
    c.Set("filter_algo", std::string("algo_1"));
    c.Set("streams", 1);
    return c;
  };
  std::vector<StrategyRule> rules = {
      {45, "conv2d_backward_cudnn_deterministic", "3x3, stride 1, dilation 1, groups 1",
       [](const Workload& w, const Target& t) { return OnGpu(t) && Winograd3x3(MakeProblem(w)); },
       [](const Workload&, const Target&) {
         Config c;
         c.Set("data_algo", std::string("winograd_nonfused"));
         c.Set("filter_algo", std::string("winograd_nonfused"));
         c.Set("streams", 1);
         return c;
       }},
      {40, "conv2d_backward_cudnn", "any GPU workload", Gpu, cudnn_default},
      {35, "conv2d_backward_cudnn_deterministic", "any GPU workload (deterministic dispatch)", Gpu, cudnn_default},
      {30, "conv2d_backward_cuda_gemm", "any GPU workload (f32)", Gpu, nullptr},
      {20, "conv2d_backward_cpu_im2col_gemm", "CPU, >= 2^20 multiply-adds", Large, nullptr},
      {10, "conv2d_backward_cpu_direct", "CPU", [](const Workload&, const Target& t) { return OnCpu(t); },
       nullptr},
  };
  return std::make_unique<Strategy>("conv2d_backward", std::move(rules));
}

}  // namespace

Status RegisterConv2dStrategies(Registry& registry) {
  OPSCHED_RETURN_IF_ERROR(registry.AddStrategy(MakeForwardStrategy(Kind::kForward)));
  OPSCHED_RETURN_IF_ERROR(registry.AddStrategy(MakeForwardStrategy(Kind::kBiasActivation)));
  OPSCHED_RETURN_IF_ERROR(registry.AddStrategy(MakeBackwardStrategy()));
  return absl::OkStatus();
}

}  // namespace opsched
