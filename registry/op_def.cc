#include "registry/op_def.h"

#include <cmath>

#include "core/format.h"

namespace opsched {

Status CheckClose(const HostTensor& output, const std::vector<double>& reference, double atol,
                  double rtol, std::string_view what) {
  const int64_t n = output.desc().numel();
  if (static_cast<int64_t>(reference.size()) != n) {
    return absl::InternalError(fmt::format("{}: reference has {} elements, output {}", what,
                                           reference.size(), n));
  }
  for (int64_t i = 0; i < n; ++i) {
    const double got = output.Get(i);
    const double want = reference[i];
    const bool ok = std::isnan(want) ? std::isnan(got)
                    : std::isinf(want) ? got == want
                                       : std::abs(got - want) <= atol + rtol * std::abs(want);
    if (!ok) {
      return absl::DataLossError(fmt::format(
          "{}: element {} is {} but the float64 reference is {} (atol {}, rtol {})", what, i,
          got, want, atol, rtol));
    }
  }
  return absl::OkStatus();
}

double DefaultRtol(DType dtype, int64_t terms) {
  // Rounding of the output itself plus accumulation error growing with sqrt(terms).
  const double growth = std::sqrt(static_cast<double>(std::max<int64_t>(terms, 1)));
  switch (dtype) {
    case DType::kF16:
      return 2e-3 + 1e-4 * growth;
    case DType::kBF16:
      return 1.6e-2 + 1e-3 * growth;
    default:
      return 2e-6 + 2e-7 * growth;
  }
}

Status OpDef::Check(const Workload& workload, const std::vector<HostTensor>& inputs,
                    const std::vector<HostTensor>& outputs,
                    const std::vector<std::vector<double>>& reference, bool deterministic,
                    const CheckContext* context) const {
  (void)inputs;
  (void)deterministic;
  (void)context;
  if (outputs.size() != reference.size()) {
    return absl::InternalError("output and reference counts differ");
  }
  const std::vector<std::string> names = OutputNames();
  for (size_t i = 0; i < outputs.size(); ++i) {
    const DType dtype = outputs[i].desc().dtype();
    const double rtol = DefaultRtol(dtype, 1);
    OPSCHED_RETURN_IF_ERROR(CheckClose(outputs[i], reference[i], rtol * 1e-3, rtol,
                                       fmt::format("{} output '{}'", workload.op(), names[i])));
  }
  return absl::OkStatus();
}

Status OpDef::DeviceError(const Workload& workload, int64_t position, int64_t value) const {
  return absl::InvalidArgumentError(fmt::format("{}: bad value {} at position {}", workload.op(),
                                                value, position));
}

double OpDef::MinBytes(const Workload& workload) const {
  double bytes = 0;
  for (const TensorArg& t : workload.tensors()) bytes += static_cast<double>(t.desc.bytes());
  for (const TensorDesc& d : OutputDescs(workload)) bytes += static_cast<double>(d.bytes());
  return bytes;
}

}  // namespace opsched
