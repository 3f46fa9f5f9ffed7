// OpDef: what an op is, independent of how it is computed — its tensors and attributes,
// validation and canonical form, output shapes, a generator of valid realistic inputs,
// a float64 reference and the check of a result against it. One per op, in
// ops/<op>/<op>_def.cc, added to a Registry by the op's Register (ops/<op>/<op>_register.h).
#pragma once

#include <memory>
#include <random>
#include <string>
#include <string_view>
#include <vector>

#include "core/host_tensor.h"
#include "core/status.h"
#include "core/workload.h"

namespace opsched {

struct GeneratorOptions {
  // How scatter-like ops draw indices: "uniform" (independent uniform draws),
  // "unique" (no duplicate targets where the shape allows), "hot" (most updates hit a
  // few targets).
  std::string index_pattern = "uniform";
  // Fraction of indices written in their negative form (index - axis size).
  double negative_index_fraction = 0.0;
  // Fraction of floating-point input values replaced by NaN, +Inf or -Inf (in equal
  // parts), for ops whose semantics define how they propagate.
  double special_value_fraction = 0.0;
};

class OpDef {
 public:
  virtual ~OpDef() = default;

  virtual std::string_view name() const = 0;
  // Tensor names in the order Run receives them: inputs, then outputs.
  virtual std::vector<std::string> InputNames() const = 0;
  virtual std::vector<std::string> OutputNames() const = 0;

  // Validates a parsed workload and brings it to canonical form (inputs in InputNames()
  // order, attributes in the op's order with defaults filled in and values normalised).
  // Errors name the tensor or attribute at fault.
  virtual Status Canonicalize(Workload* workload) const = 0;
  // Descriptors of the outputs of a canonical workload (contiguous).
  virtual std::vector<TensorDesc> OutputDescs(const Workload& workload) const = 0;

  // Fills `inputs` (allocated with the workload's input descriptors) with valid inputs
  // drawn from `rng`: never all zeros, indices in range.
  virtual Status Generate(const Workload& workload, const GeneratorOptions& options,
                          std::mt19937_64& rng, std::vector<HostTensor>* inputs) const = 0;
  // The outputs in float64, row-major, one vector per output.
  virtual StatusOr<std::vector<std::vector<double>>> Reference(
      const Workload& workload, const std::vector<HostTensor>& inputs) const = 0;
  // What checking needs that depends only on the inputs (computed once per inputs, then
  // used for every candidate's Check). Ops that need nothing return null.
  class CheckContext {
   public:
    virtual ~CheckContext() = default;
  };
  virtual std::unique_ptr<CheckContext> PrepareCheck(const Workload& workload,
                                                     const std::vector<HostTensor>& inputs) const {
    (void)workload;
    (void)inputs;
    return nullptr;
  }
  // OK when `outputs` match the reference within the op's tolerance for the dtypes;
  // otherwise an error naming the first mismatch. `deterministic` is false for
  // implementations allowed to pick any one of several valid results. `context` is what
  // PrepareCheck returned for these inputs.
  virtual Status Check(const Workload& workload, const std::vector<HostTensor>& inputs,
                       const std::vector<HostTensor>& outputs,
                       const std::vector<std::vector<double>>& reference, bool deterministic,
                       const CheckContext* context) const;

  // The error for a data error an implementation found on the device (error_slot.h):
  // the first bad position (row-major) and the value there.
  virtual Status DeviceError(const Workload& workload, int64_t position, int64_t value) const;

  // A fixed-width numeric description of a canonical workload for learned models (the
  // selector, selector/): the sizes and attributes that decide which kernel is fast, in
  // log2 where they scale. The default is Workload::Features().
  virtual std::vector<double> ModelFeatures(const Workload& canonical) const { return canonical.Features(); }

  // The fewest bytes an implementation must move (each input read and each output
  // written once), for bandwidth figures.
  virtual double MinBytes(const Workload& workload) const;
  virtual double Flops(const Workload& workload) const { (void)workload; return 0; }
};

// Compares outputs elementwise with |out - ref| <= atol + rtol * |ref| (NaN only where
// the reference is NaN); the common body of OpDef::Check.
Status CheckClose(const HostTensor& output, const std::vector<double>& reference, double atol,
                  double rtol, std::string_view what);
// Tolerances used by CheckClose for an output dtype when `terms` values were summed.
double DefaultRtol(DType dtype, int64_t terms);

}  // namespace opsched
