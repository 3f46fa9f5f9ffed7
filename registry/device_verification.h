// DeviceVerification: an op's float64 reference on the GPU, so that the tuner checks a
// candidate without moving workload-sized data between host and device (MIOpen #398: a
// search that waits on the host does not pay for itself). For one workload it
//   1. generates valid inputs on the device with a counter-based generator
//      (core/gpu/verify.h): a seed gives the same inputs whatever the launch shape;
//   2. computes the float64 reference once — plain kernels, one thread per output (per
//      input element where an op scatters), no tricks — and keeps it on the device;
//   3. compares each candidate's outputs there, under the same tolerances as the op's
//      CPU Check (OpDef::Check), and names the first mismatch in the same words.
// The CPU reference stays for CPU targets and tests; tests cross-check the two. Ops
// add one per op name in their GPU build (ops/<op>/<op>_register.h); without a GPU
// build there is none and Trial verifies on the host.
#pragma once

#include <memory>
#include <string_view>
#include <vector>

#include "absl/types/span.h"
#include "core/status.h"
#include "core/stream.h"
#include "core/tensor.h"
#include "core/workload.h"
#include "registry/op_def.h"

namespace opsched {

// The reference of one workload's inputs, kept on the device.
class DeviceReference {
 public:
  virtual ~DeviceReference() = default;
  // OK when `outputs` (device tensors, in OpDef order) match the reference; otherwise
  // DataLoss naming the first mismatch. `deterministic` as in OpDef::Check. Waits for
  // the comparison (a few bytes come back).
  virtual Status Check(absl::Span<const Tensor> outputs, bool deterministic,
                       const Stream& stream) const = 0;
  // The reference values, one row-major vector per output (tests compare them with the
  // CPU reference).
  virtual StatusOr<std::vector<std::vector<double>>> Download(const Stream& stream) const = 0;
};

class DeviceVerification {
 public:
  virtual ~DeviceVerification() = default;
  virtual std::string_view op() const = 0;
  // Fills `inputs` (device tensors of the workload's input descriptors) with valid,
  // realistic inputs: the device counterpart of OpDef::Generate (same distributions and
  // index patterns, other values).
  virtual Status Generate(const Workload& canonical, const GeneratorOptions& options, uint64_t seed,
                          absl::Span<const Tensor> inputs, const Stream& stream) const = 0;
  // Computes the reference of `inputs` on the device. An invalid input (an out-of-range
  // index) is the op's own error, as from OpDef::Reference.
  virtual StatusOr<std::unique_ptr<DeviceReference>> Reference(const Workload& canonical,
                                                               absl::Span<const Tensor> inputs,
                                                               const Stream& stream) const = 0;
};

}  // namespace opsched
