#include "registry/registry.h"

#include "core/format.h"

namespace opsched {

Registry& Registry::Global() {
  static Registry* registry = new Registry();  // never destroyed: used until exit
  return *registry;
}

namespace {

// Adds `value` under `key` unless the key is taken; `twice` (a format with one {} for
// the key) says what a second registration is.
template <typename Map, typename T>
Status AddOnce(Map& map, std::string key, std::unique_ptr<T> value, std::string_view twice) {
  if (map.count(key)) return absl::AlreadyExistsError(fmt::format(fmt::runtime(twice), key));
  map.emplace(std::move(key), std::move(value));
  return absl::OkStatus();
}

}  // namespace

Status Registry::AddOp(std::unique_ptr<OpDef> op) {
  std::string name(op->name());
  return AddOnce(ops_, std::move(name), std::move(op), "op '{}' is registered twice");
}

Status Registry::AddImplementation(std::unique_ptr<Implementation> implementation) {
  std::string name(implementation->name());
  return AddOnce(implementations_, std::move(name), std::move(implementation),
                 "implementation '{}' is registered twice");
}

Status Registry::AddStrategy(std::unique_ptr<Strategy> strategy) {
  std::string op(strategy->op());
  return AddOnce(strategies_, std::move(op), std::move(strategy), "op '{}' has two strategies");
}

Status Registry::AddDeviceVerification(std::unique_ptr<DeviceVerification> verification) {
  std::string op(verification->op());
  return AddOnce(verifications_, std::move(op), std::move(verification), "op '{}' has two device verifications");
}

const DeviceVerification* Registry::FindDeviceVerification(std::string_view op) const {
  auto it = verifications_.find(op);
  return it == verifications_.end() ? nullptr : it->second.get();
}

const OpDef* Registry::FindOp(std::string_view name) const {
  auto it = ops_.find(name);
  return it == ops_.end() ? nullptr : it->second.get();
}

const Implementation* Registry::FindImplementation(std::string_view name) const {
  auto it = implementations_.find(name);
  return it == implementations_.end() ? nullptr : it->second.get();
}

LibraryUse Registry::LibraryUseOf(std::string_view implementation) const {
  const Implementation* impl = FindImplementation(implementation);
  if (impl == nullptr) return LibraryUse{};
  const ImplementationTraits t = impl->traits();
  return LibraryUse{.cublas = t.uses_cublas, .cudnn = t.uses_cudnn};
}

const Strategy* Registry::FindStrategy(std::string_view op) const {
  auto it = strategies_.find(op);
  return it == strategies_.end() ? nullptr : it->second.get();
}

std::vector<const OpDef*> Registry::ops() const {
  std::vector<const OpDef*> out;
  for (const auto& [name, op] : ops_) out.push_back(op.get());
  return out;
}

std::vector<const Implementation*> Registry::ImplementationsOf(std::string_view op) const {
  std::vector<const Implementation*> out;
  for (const auto& [name, impl] : implementations_) {
    if (impl->op() == op) out.push_back(impl.get());
  }
  return out;
}

Status Registry::Canonicalize(Workload* workload) const {
  const OpDef* op = FindOp(workload->op());
  if (op == nullptr) {
    std::string known;
    for (const auto& [name, def] : ops_) known += (known.empty() ? "" : ", ") + name;
    return absl::NotFoundError(
        fmt::format("unknown op '{}' (registered: {})", workload->op(), known));
  }
  // Every tensor, inputs as given and outputs as the op derives them (padding grows a
  // convolution's output), within TensorDesc's limits: sizes computed from a canonical
  // workload never overflow.
  for (const TensorArg& t : workload->tensors()) {
    Status valid = t.desc.Validate();
    if (!valid.ok()) return Annotate(valid, fmt::format("{}: tensor '{}'", workload->op(), t.name));
  }
  OPSCHED_RETURN_IF_ERROR(op->Canonicalize(workload));
  const std::vector<TensorDesc> outputs = op->OutputDescs(*workload);
  for (size_t i = 0; i < outputs.size(); ++i) {
    Status valid = outputs[i].Validate();
    if (!valid.ok()) return Annotate(valid, fmt::format("{}: output {}", workload->op(), i));
  }
  return absl::OkStatus();
}

StatusOr<Workload> Registry::ParseCanonical(std::string_view line) const {
  OPSCHED_ASSIGN_OR_RETURN(Workload w, ParseWorkload(line));
  OPSCHED_RETURN_IF_ERROR(Canonicalize(&w));
  return w;
}

}  // namespace opsched
