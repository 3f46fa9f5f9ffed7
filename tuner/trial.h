// Trial: one workload's inputs on a device, ready to run implementations against —
// the common ground of the tuner's measurements and the ops' tests. It generates
// fresh inputs, poisons the outputs before every run, reads device-reported data errors
// back, and checks results against the op's float64 reference — either on the host
// (OpDef::Generate, Reference and Check; inputs uploaded, outputs downloaded) or, on a
// GPU, entirely on the device (registry/device_verification.h: inputs generated
// there, the reference computed once there, outputs compared there, inputs
// fingerprinted), so that nothing of workload size crosses PCIe.
#pragma once

#include <memory>
#include <random>
#include <string_view>
#include <vector>

#include "core/buffer.h"
#include "core/error_slot_pool.h"
#include "core/host_tensor.h"
#include "core/stream.h"
#include "core/target.h"
#include "registry/registry.h"

namespace opsched {

// Where a trial generates inputs and checks outputs.
enum class Verification {
  kHost,    // OpDef::Generate / Reference / Check on the host (tests, CPU targets)
  kDevice,  // the op's DeviceVerification; an error when there is none for the target
  kAuto,    // kDevice on a GPU target whose op has one, else kHost (the tuner)
};

// "auto", "host" or "device" (the tuner's --verify), and back.
StatusOr<Verification> ParseVerification(std::string_view name);
std::string_view VerificationName(Verification v);

struct TrialOptions {
  GeneratorOptions generator;
  Verification verification = Verification::kHost;
  uint64_t seed = 0;
  // Run with the output aliasing the first input (in place).
  bool in_place = false;
};

class Trial {
 public:
  // Allocates the workload's tensors on the target's device and fills the inputs with
  // generated values. `canonical` must be canonical.
  static StatusOr<std::unique_ptr<Trial>> Create(const Registry& registry,
                                                 const Workload& canonical, const Target& target,
                                                 const TrialOptions& options);

  const Workload& workload() const { return workload_; }
  const OpDef& op() const { return *op_; }
  const Stream& stream() const { return stream_; }
  // True when inputs live only on the device and checks run there (Verification).
  bool verifies_on_device() const { return device_verification_ != nullptr; }
  // The host inputs (on the device path, empty until DownloadInputs()).
  std::vector<HostTensor>& inputs() { return inputs_; }
  // The host copies of the outputs after Run (host path only).
  const std::vector<HostTensor>& outputs() const { return outputs_; }
  // The device tensors: inputs then outputs (what Run receives).
  const std::vector<Tensor>& tensors() const { return tensors_; }

  // Copies the host inputs (after the caller changed them) to the device (host path).
  Status Upload();
  // Copies the device inputs into inputs() (tests cross-check the device path with it).
  Status DownloadInputs();
  // Poisons the outputs (restores the first input when in place), runs once, waits,
  // returns a device-reported data error as the op's error, and downloads the outputs.
  Status Run(const Implementation& impl, const Config& config);
  // Queues one run on the stream without waiting (the measurer's timed loop). The
  // error slot is reused; Run() reads it.
  Status Launch(const Implementation& impl, const Config& config);
  // Prepares `impl` with `config` for this workload (Implementation::Prepare, kept until
  // another implementation or config is prepared) and grows the workspace to what it
  // needs: the tuner measures exactly what the Runtime serves.
  Status Prepare(const Implementation& impl, const Config& config);

  // The float64 reference of the current inputs (computed once per Upload): on the
  // device path, the device reference downloaded.
  StatusOr<const std::vector<std::vector<double>>*> Reference();
  // The device reference (device path), computed on first use.
  StatusOr<const DeviceReference*> DeviceRef();
  // Compares the outputs of the last Run with the reference (downloaded ones on the
  // host path, the device tensors on the device path).
  Status Check(const Implementation& impl);
  // OK when the device copies of the inputs still equal the host inputs (an op must
  // not modify its inputs; in place, the first input is exempt).
  Status CheckInputsUnchanged() const;

 private:
  Trial() = default;
  Status Poison();
  // The device tensors of the outputs.
  absl::Span<const Tensor> OutputTensors() const {
    return absl::MakeConstSpan(tensors_).subspan(workload_.tensors().size());
  }

  const OpDef* op_ = nullptr;
  Workload workload_;
  Target target_;
  TrialOptions options_;
  Stream stream_;
  std::vector<HostTensor> inputs_;
  std::vector<HostTensor> outputs_;
  std::vector<TensorDesc> output_descs_;
  // The device path: the op's verification, its reference, the inputs' fingerprints and
  // (in place) a pristine copy of the first input.
  const DeviceVerification* device_verification_ = nullptr;
  std::unique_ptr<DeviceReference> device_reference_;
  std::vector<uint64_t> input_fingerprints_;
  Buffer pristine_;
  std::vector<Buffer> input_buffers_;
  std::vector<Buffer> output_buffers_;
  std::vector<Tensor> tensors_;
  Buffer workspace_;
  const Implementation* prepared_impl_ = nullptr;
  Config prepared_config_;
  std::unique_ptr<Prepared> prepared_;
  std::unique_ptr<ErrorSlotPool> slots_;
  ErrorSlot slot_;
  std::vector<std::vector<double>> reference_;
  std::unique_ptr<OpDef::CheckContext> check_context_;
  bool reference_ready_ = false;
};

}  // namespace opsched
