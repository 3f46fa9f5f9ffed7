// Registry: every op definition, implementation and strategy linked into the program.
// Each registers itself next to its code (OPSCHED_REGISTER_OP / _IMPLEMENTATION /
// _STRATEGY in a library built with alwayslink), so adding one never edits a central
// list. The tuner and the dispatcher know ops only through the registry.
#pragma once

#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "core/status.h"
#include "core/workload.h"
#include "registry/device_verification.h"
#include "registry/implementation.h"
#include "registry/op_def.h"
#include "registry/strategy.h"

namespace opsched {

class Registry {
 public:
  // The registry that OPSCHED_REGISTER_* fill during static initialisation.
  static Registry& Global();

  Registry() = default;
  Registry(const Registry&) = delete;
  Registry& operator=(const Registry&) = delete;

  // Errors on a duplicate name (the first registration stays).
  Status AddOp(std::unique_ptr<OpDef> op);
  Status AddImplementation(std::unique_ptr<Implementation> implementation);
  Status AddStrategy(std::unique_ptr<Strategy> strategy);
  Status AddDeviceVerification(std::unique_ptr<DeviceVerification> verification);

  const OpDef* FindOp(std::string_view name) const;
  const Implementation* FindImplementation(std::string_view name) const;
  const Strategy* FindStrategy(std::string_view op) const;
  // The op's device-side verification; null when the build has none (no GPU build).
  const DeviceVerification* FindDeviceVerification(std::string_view op) const;
  std::vector<const OpDef*> ops() const;
  // Implementations of `op`, in registration-name order.
  std::vector<const Implementation*> ImplementationsOf(std::string_view op) const;

  // Validates and canonicalises through the op's definition; every input and output
  // descriptor must pass TensorDesc::Validate (sizes within the limits).
  Status Canonicalize(Workload* workload) const;
  // Parses a workload line and canonicalises it.
  StatusOr<Workload> ParseCanonical(std::string_view line) const;

 private:
  std::map<std::string, std::unique_ptr<OpDef>, std::less<>> ops_;
  std::map<std::string, std::unique_ptr<Implementation>, std::less<>> implementations_;
  std::map<std::string, std::unique_ptr<Strategy>, std::less<>> strategies_;
  std::map<std::string, std::unique_ptr<DeviceVerification>, std::less<>> verifications_;
};

// Used by the registration macros: adds to Registry::Global(), logging an error on a
// duplicate. Returns true so it can initialise a static.
bool RegisterOp(std::unique_ptr<OpDef> op);
bool RegisterImplementation(std::unique_ptr<Implementation> implementation);
bool RegisterStrategy(std::unique_ptr<Strategy> strategy);
bool RegisterDeviceVerification(std::unique_ptr<DeviceVerification> verification);

}  // namespace opsched

#define OPSCHED_REGISTRY_CONCAT_INNER(a, b) a##b
#define OPSCHED_REGISTRY_CONCAT(a, b) OPSCHED_REGISTRY_CONCAT_INNER(a, b)

#define OPSCHED_REGISTER_OP(Class)                                                  \
  [[maybe_unused]] static const bool OPSCHED_REGISTRY_CONCAT(opsched_op_, __LINE__) = \
      ::opsched::RegisterOp(std::make_unique<Class>())

#define OPSCHED_REGISTER_IMPLEMENTATION(Class)                                          \
  [[maybe_unused]] static const bool OPSCHED_REGISTRY_CONCAT(opsched_impl_, __LINE__) = \
      ::opsched::RegisterImplementation(std::make_unique<Class>())

#define OPSCHED_REGISTER_DEVICE_VERIFICATION(Class)                                       \
  [[maybe_unused]] static const bool OPSCHED_REGISTRY_CONCAT(opsched_verify_, __LINE__) = \
      ::opsched::RegisterDeviceVerification(std::make_unique<Class>())

// `make` is an expression yielding std::unique_ptr<Strategy>.
#define OPSCHED_REGISTER_STRATEGY(make)                                                     \
  [[maybe_unused]] static const bool OPSCHED_REGISTRY_CONCAT(opsched_strategy_, __LINE__) = \
      ::opsched::RegisterStrategy(make)
