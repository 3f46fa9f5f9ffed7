// The scatter op's device-side verification (registry/device_verification.h): inputs
// generated on the GPU like ScatterOp::Generate, the float64 reference and the check of
// ScatterOp::Check computed there (scatter_cuda_reference.cu).
#include "core/buffer.h"
#include "core/format.h"
#include "core/gpu/gpu_backend.h"
#include "core/gpu/gpu_status.h"
#include "core/gpu/verify.h"
#include "ops/scatter/scatter_cuda_reference.h"
#include "ops/scatter/scatter_def.h"
#include "ops/scatter/scatter_register.h"
#include "registry/registry.h"

namespace opsched::scatter {
namespace {

namespace ref = gpu_reference;

gpuStream_t Native(const Stream& s) { return static_cast<gpuStream_t>(s.native()); }

class ScatterDeviceReference : public DeviceReference {
 public:
  static StatusOr<std::unique_ptr<ScatterDeviceReference>> Create(const Workload& w, absl::Span<const Tensor> inputs,
                                                                  const Stream& stream) {
    auto r = std::unique_ptr<ScatterDeviceReference>(new ScatterDeviceReference());
    r->workload_ = w;
    r->problem_.data = gpu::ToRef(inputs[0]);
    r->problem_.indices = gpu::ToRef(inputs[1]);
    r->problem_.updates = gpu::ToRef(inputs[2]);
    r->problem_.axis = static_cast<int>(*w.GetInt("axis"));
    OPSCHED_ASSIGN_OR_RETURN(r->problem_.reduction, ParseReduction(*w.GetString("reduction")));
    const int64_t targets = inputs[0].desc.numel();
    const size_t per_target = 2 * sizeof(double) + 2 * sizeof(int32_t) + sizeof(unsigned long long);
    const Device device = stream.device();
    OPSCHED_ASSIGN_OR_RETURN(r->memory_,
                             Buffer::Allocate(device, std::max<size_t>(per_target * targets + 64, 64)));
    char* base = static_cast<char*>(r->memory_.data());
    // Doubles first (8-byte aligned), then the 64-bit winners, then the 32-bit counters.
    r->state_.ref = reinterpret_cast<double*>(base);
    r->state_.magnitude = r->state_.ref + targets;
    r->state_.winner = reinterpret_cast<unsigned long long*>(r->state_.magnitude + targets);
    r->state_.count = reinterpret_cast<int32_t*>(r->state_.winner + targets);
    r->state_.matched = r->state_.count + targets;
    r->state_.bad = reinterpret_cast<unsigned long long*>(base + per_target * targets + 56);
    OPSCHED_RETURN_IF_ERROR(gpu::MemsetAsync(r->state_.bad, 0xff, sizeof(unsigned long long), stream.native()));
    OPSCHED_RETURN_IF_ERROR(gpu::ToStatus(ref::LaunchReference(r->problem_, r->state_, Native(stream)),
                                          "scatter reference"));
    unsigned long long bad = 0;
    OPSCHED_RETURN_IF_ERROR(gpu::MemcpyAsync(&bad, r->state_.bad, sizeof bad, stream.native()));
    OPSCHED_RETURN_IF_ERROR(stream.Synchronize());
    if (bad != ~0ull) {
      const int64_t p = static_cast<int64_t>(bad);
      OPSCHED_ASSIGN_OR_RETURN(double value, gpu::ReadElement(inputs[1], p, stream.native()));
      return OutOfRangeError(w, p, static_cast<int64_t>(value));
    }
    return r;
  }

  Status Check(absl::Span<const Tensor> outputs, bool deterministic, const Stream& stream) const override {
    const Tensor& out = outputs[0];
    const DType dtype = out.desc.dtype();
    ref::Tolerance tol;
    tol.unit_roundoff = UnitRoundoff(dtype);
    tol.smallest_normal = SmallestNormal(dtype);
    tol.integer = IsInteger(dtype);
    OPSCHED_ASSIGN_OR_RETURN(Buffer scratch, Buffer::Allocate(stream.device(), sizeof(ref::CheckResult)));
    auto* result = static_cast<ref::CheckResult*>(scratch.data());
    const ref::CheckResult init{0, ~0ull};
    OPSCHED_RETURN_IF_ERROR(gpu::MemcpyAsync(result, &init, sizeof init, stream.native()));
    OPSCHED_RETURN_IF_ERROR(gpu::ToStatus(
        ref::LaunchCheck(problem_, gpu::ToRef(out), state_, tol, deterministic, result, Native(stream)),
        "scatter check"));
    ref::CheckResult host{};
    OPSCHED_RETURN_IF_ERROR(gpu::MemcpyAsync(&host, result, sizeof host, stream.native()));
    OPSCHED_RETURN_IF_ERROR(stream.Synchronize());
    if (host.count == 0) return absl::OkStatus();
    // Read back what the first mismatch saw and say what was allowed, as the CPU check does.
    const int64_t t = static_cast<int64_t>(host.first);
    double want = 0, magnitude = 0;
    int32_t count = 0;
    OPSCHED_ASSIGN_OR_RETURN(double got, gpu::ReadElement(out, t, stream.native()));
    OPSCHED_RETURN_IF_ERROR(gpu::ReadDoubles(state_.ref + t, 1, &want, stream.native()));
    OPSCHED_RETURN_IF_ERROR(gpu::ReadDoubles(state_.magnitude + t, 1, &magnitude, stream.native()));
    OPSCHED_RETURN_IF_ERROR(gpu::MemcpyAsync(&count, state_.count + t, sizeof count, stream.native()));
    OPSCHED_RETURN_IF_ERROR(stream.Synchronize());
    const Reduction r = problem_.reduction;
    std::string allowed;
    if (r == Reduction::kNone && count > 0 && !deterministic) {
      allowed = fmt::format("one of the {} competing updates", count);
    } else if (tol.integer || r == Reduction::kNone || r == Reduction::kMin || r == Reduction::kMax || count == 0) {
      allowed = fmt::format("{}", want);
    } else if (r == Reduction::kAdd) {
      allowed = fmt::format("{} within {}", want, ref::AddBound(tol, count, magnitude, want));
    } else {
      allowed = fmt::format("{} within {}", want, ref::MulBound(tol, count, want));
    }
    const Status error = MismatchError(*workload_.FindTensor("data"), t, got, allowed, count);
    return absl::DataLossError(fmt::format("{} [device check: {} of {} targets differ]", Message(error), host.count,
                                           problem_.data.numel));
  }

  StatusOr<std::vector<std::vector<double>>> Download(const Stream& stream) const override {
    std::vector<double> out(static_cast<size_t>(problem_.data.numel));
    OPSCHED_RETURN_IF_ERROR(gpu::ReadDoubles(state_.ref, problem_.data.numel, out.data(), stream.native()));
    return std::vector<std::vector<double>>{std::move(out)};
  }

 private:
  ScatterDeviceReference() = default;

  Workload workload_;
  ref::Problem problem_;
  ref::State state_;
  Buffer memory_;
};

class ScatterDeviceVerification : public DeviceVerification {
 public:
  std::string_view op() const override { return "scatter"; }

  Status Generate(const Workload& w, const GeneratorOptions& options, uint64_t seed, absl::Span<const Tensor> inputs,
                  const Stream& stream) const override {
    const int axis = static_cast<int>(*w.GetInt("axis"));
    const int64_t axis_size = inputs[0].desc.dim(axis);
    if (inputs[1].desc.numel() > 0 && axis_size == 0) {
      return absl::InvalidArgumentError("scatter: no valid index exists for an empty axis");
    }
    // Integers as ScatterOp::Generate draws them: [-50, 50], mul's updates [-2, 2].
    const bool integer = IsInteger(inputs[0].desc.dtype());
    const bool mul = *w.GetString("reduction") == "mul";
    const gpu::FillOptions data_values = integer ? gpu::FillOptions{.lo = -50, .hi = 50} : gpu::FillOptions{};
    const gpu::FillOptions update_values = !integer ? gpu::FillOptions{}
                                           : mul    ? gpu::FillOptions{.lo = -2, .hi = 2}
                                                    : data_values;
    OPSCHED_RETURN_IF_ERROR(gpu::Fill(inputs[0], seed, 0, data_values, stream.native()));
    OPSCHED_RETURN_IF_ERROR(gpu::Fill(inputs[2], seed, 2, update_values, stream.native()));
    ref::IndexOptions io;
    io.pattern = options.index_pattern == "unique" ? ref::IndexPattern::kUnique
                 : options.index_pattern == "hot"  ? ref::IndexPattern::kHot
                                                   : ref::IndexPattern::kUniform;
    io.negative_fraction = options.negative_index_fraction;
    io.seed = seed;
    io.id = 16;
    return gpu::ToStatus(ref::LaunchGenerateIndices(gpu::ToRef(inputs[1]), axis, axis_size, io, Native(stream)),
                         "scatter index generation");
  }

  StatusOr<std::unique_ptr<DeviceReference>> Reference(const Workload& w, absl::Span<const Tensor> inputs,
                                                       const Stream& stream) const override {
    OPSCHED_ASSIGN_OR_RETURN(std::unique_ptr<ScatterDeviceReference> r,
                             ScatterDeviceReference::Create(w, inputs, stream));
    return std::unique_ptr<DeviceReference>(std::move(r));
  }
};

}  // namespace

Status RegisterDeviceVerification(Registry& registry) {
  return registry.AddDeviceVerification(std::make_unique<ScatterDeviceVerification>());
}

}  // namespace opsched::scatter
