// Registry: the op definitions, implementations, device verifications and strategies a
// program serves. It is filled explicitly: RegisterAll() (strategies/register_all.h) adds
// everything built, each op through its ops/<op>/<op>_register.h, and tests add their own
// ops to a Registry of their own. The tuner and the dispatcher know ops only through the
// registry.
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
  // The process's registry: empty until RegisterAll() fills it.
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
  // The vendor libraries an implementation calls (its traits); both for an unknown name.
  LibraryUse LibraryUseOf(std::string_view implementation) const;
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

}  // namespace opsched
