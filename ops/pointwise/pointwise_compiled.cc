// CompiledFor: the program of a canonical workload parsed, bound and compiled once, then
// served from a cache keyed by the workload (its program text and descriptors).
#include <mutex>
#include <unordered_map>

#include "core/format.h"
#include "ops/pointwise/pointwise_accumulate.h"
#include "ops/pointwise/pointwise_compile.h"
#include "ops/pointwise/pointwise_def.h"

namespace opsched::pointwise {
namespace {

// Bounded: past this many programs the cache starts over (entries in use stay alive
// through their shared_ptr).
constexpr size_t kMaxEntries = 4096;

struct Cache {
  std::mutex mu;
  std::unordered_multimap<uint64_t, std::pair<Workload, std::shared_ptr<const Compiled>>> entries;
};

Cache& TheCache() {
  static Cache* cache = new Cache();
  return *cache;
}

StatusOr<std::shared_ptr<const Compiled>> Build(const Workload& w) {
  auto c = std::make_shared<Compiled>();
  std::vector<std::string> declared;
  for (const TensorArg& t : w.tensors()) {
    declared.push_back(t.name);
    c->inputs.push_back(t.desc);
  }
  OPSCHED_ASSIGN_OR_RETURN(Dims shape, w.GetInts("shape"));
  for (const Attr& a : w.attrs()) {
    if (a.name == "expr" || a.name == "shape") continue;
    declared.push_back(a.name);
    const std::string* word = std::get_if<std::string>(&a.value);
    if (word == nullptr) return absl::InvalidArgumentError("pointwise: workload is not canonical");
    OPSCHED_ASSIGN_OR_RETURN(DType d, ParseDType(*word));
    c->outputs.push_back(TensorDesc::Contiguous(d, shape));
  }
  OPSCHED_ASSIGN_OR_RETURN(std::string_view expr, w.GetString("expr"));
  OPSCHED_ASSIGN_OR_RETURN(c->program, BindProgram(expr, declared));
  // Canonical: tensors and output attributes in the program's (name) order.
  bool canonical = c->program.inputs.size() == c->inputs.size() && c->program.outputs.size() == c->outputs.size();
  for (size_t i = 0; canonical && i < c->inputs.size(); ++i) canonical = c->program.inputs[i] == declared[i];
  for (size_t o = 0; canonical && o < c->outputs.size(); ++o) {
    canonical = c->program.outputs[o] == declared[c->inputs.size() + o];
  }
  if (!canonical) return absl::InvalidArgumentError("pointwise: workload is not canonical");
  OPSCHED_ASSIGN_OR_RETURN(c->bytecode, Compile(c->program, c->inputs, c->outputs));
  OPSCHED_ASSIGN_OR_RETURN(c->accumulator, ToAccumulatorForm(c->bytecode));
  c->hoisted = Hoist(c->program, c->inputs, c->outputs);
  return std::shared_ptr<const Compiled>(std::move(c));
}

}  // namespace

StatusOr<std::shared_ptr<const Compiled>> CompiledFor(const Workload& canonical) {
  Cache& cache = TheCache();
  const uint64_t hash = canonical.FastHash();
  {
    std::lock_guard<std::mutex> lock(cache.mu);
    auto [begin, end] = cache.entries.equal_range(hash);
    for (auto it = begin; it != end; ++it) {
      if (it->second.first == canonical) return it->second.second;
    }
  }
  OPSCHED_ASSIGN_OR_RETURN(std::shared_ptr<const Compiled> c, Build(canonical));
  std::lock_guard<std::mutex> lock(cache.mu);
  if (cache.entries.size() >= kMaxEntries) cache.entries.clear();
  cache.entries.emplace(hash, std::make_pair(canonical, c));
  return c;
}

StatusOr<std::shared_ptr<const Compiled>> HoistedOf(const Workload& canonical) {
  OPSCHED_ASSIGN_OR_RETURN(std::shared_ptr<const Compiled> c, CompiledFor(canonical));
  if (!c->hoisted) {
    return absl::FailedPreconditionError(fmt::format(
        "nothing to hoist: no subexpression of an operation or more varies over fewer of the outputs' dimensions "
        "with each value reused {} times or more (or the hoisted form exceeds the bytecode's limits)",
        kMinHoistReuse));
  }
  return c;
}

}  // namespace opsched::pointwise
