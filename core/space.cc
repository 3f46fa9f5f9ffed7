#include "core/space.h"

#include <algorithm>
#include <cstdlib>
#include <optional>

#include "core/format.h"

namespace opsched {

ConfigSpace& ConfigSpace::Add(std::string name, std::vector<KnobValue> values) {
  knobs_.push_back(KnobDomain{std::move(name), std::move(values)});
  return *this;
}

ConfigSpace& ConfigSpace::AddInts(std::string name, const std::vector<int64_t>& values) {
  return Add(std::move(name), std::vector<KnobValue>(values.begin(), values.end()));
}

ConfigSpace& ConfigSpace::Add(std::string name, std::vector<KnobValue> values, KnobValue preferred) {
  knobs_.push_back(KnobDomain{std::move(name), std::move(values), std::move(preferred)});
  return *this;
}

ConfigSpace& ConfigSpace::AddInts(std::string name, const std::vector<int64_t>& values, int64_t preferred) {
  return Add(std::move(name), std::vector<KnobValue>(values.begin(), values.end()), KnobValue(preferred));
}

StatusOr<Config> ConfigSpace::Default() const {
  Config wanted;
  for (const KnobDomain& k : knobs_) {
    if (k.preferred) {
      wanted.Set(k.name, *k.preferred);
    } else if (!k.values.empty()) {
      wanted.Set(k.name, k.values.front());
    }
  }
  if (Contains(wanted)) return wanted;
  return Closest(wanted);
}

ConfigSpace& ConfigSpace::Constrain(std::string description,
                                    std::function<bool(const Config&)> holds) {
  constraints_.push_back(Constraint{std::move(description), std::move(holds)});
  return *this;
}

int64_t ConfigSpace::CartesianSize() const {
  int64_t n = 1;
  for (const KnobDomain& k : knobs_) n *= static_cast<int64_t>(k.values.size());
  return n;
}

bool ConfigSpace::Satisfies(const Config& config) const {
  for (const Constraint& c : constraints_) {
    if (!c.holds(config)) return false;
  }
  return true;
}

Status ConfigSpace::Check(const Config& config) const {
  // A knob the config leaves out takes its declared default (Knobs::Parse does the same):
  // records written before an implementation gained a knob name the configs they measured.
  Config complete = config;
  size_t found = 0;
  for (const KnobDomain& k : knobs_) {
    const KnobValue* v = config.Find(k.name);
    if (v == nullptr) {
      if (!k.preferred.has_value()) {
        return absl::InvalidArgumentError(fmt::format("config {} lacks knob '{}'", config.ToString(), k.name));
      }
      complete.Set(k.name, *k.preferred);
      continue;
    }
    ++found;
    if (std::find(k.values.begin(), k.values.end(), *v) == k.values.end()) {
      return absl::InvalidArgumentError(fmt::format("knob {}={} is outside its domain",
                                                    k.name, KnobValueToString(*v)));
    }
  }
  if (found != config.knobs().size()) {
    for (const Knob& knob : config.knobs()) {
      const bool declared =
          std::any_of(knobs_.begin(), knobs_.end(), [&](const KnobDomain& k) { return k.name == knob.name; });
      if (!declared) {
        return absl::InvalidArgumentError(fmt::format("config {} sets knob '{}', which the space lacks",
                                                      config.ToString(), knob.name));
      }
    }
  }
  for (const Constraint& c : constraints_) {
    if (!c.holds(complete)) {
      return absl::InvalidArgumentError(
          fmt::format("config {} breaks '{}'", config.ToString(), c.description));
    }
  }
  return absl::OkStatus();
}

std::vector<Config> ConfigSpace::Enumerate(size_t limit) const {
  std::vector<Config> out;
  for (const KnobDomain& k : knobs_) {
    if (k.values.empty()) return out;
  }
  std::vector<size_t> digit(knobs_.size(), 0);
  while (out.size() < limit) {
    Config c;
    for (size_t i = 0; i < knobs_.size(); ++i) c.Set(knobs_[i].name, knobs_[i].values[digit[i]]);
    if (Satisfies(c)) out.push_back(std::move(c));
    size_t i = 0;
    for (; i < knobs_.size(); ++i) {
      if (++digit[i] < knobs_[i].values.size()) break;
      digit[i] = 0;
    }
    if (i == knobs_.size()) break;
  }
  return out;
}

StatusOr<Config> ConfigSpace::Sample(std::mt19937_64& rng, int max_tries) const {
  for (const KnobDomain& k : knobs_) {
    if (k.values.empty()) {
      return absl::NotFoundError(fmt::format("knob '{}' has an empty domain", k.name));
    }
  }
  for (int t = 0; t < max_tries; ++t) {
    Config c;
    for (const KnobDomain& k : knobs_) {
      std::uniform_int_distribution<size_t> pick(0, k.values.size() - 1);
      c.Set(k.name, k.values[pick(rng)]);
    }
    if (Satisfies(c)) return c;
  }
  return absl::NotFoundError(
      fmt::format("no legal config found in {} random draws", max_tries));
}

namespace {

// Where `wanted` sits in `domain`, in half steps: 2 * its index when it is a value of the
// domain; between two neighbours (odd) when it is an integer inside or beyond an ascending
// integer domain; -1 when it cannot be placed (a string outside the domain, an unsorted
// domain).
long HalfStepPosition(const std::vector<KnobValue>& domain, const KnobValue& wanted) {
  auto it = std::find(domain.begin(), domain.end(), wanted);
  if (it != domain.end()) return 2 * static_cast<long>(it - domain.begin());
  const int64_t* v = std::get_if<int64_t>(&wanted);
  if (v == nullptr || domain.empty()) return -1;
  long below = 0;
  for (size_t i = 0; i < domain.size(); ++i) {
    const int64_t* d = std::get_if<int64_t>(&domain[i]);
    if (d == nullptr) return -1;
    if (i > 0 && *d <= std::get<int64_t>(domain[i - 1])) return -1;
    if (*d < *v) ++below;
  }
  return 2 * below - 1;
}

}  // namespace

StatusOr<Config> ConfigSpace::Closest(const Config& wanted) const {
  std::vector<long> want(knobs_.size(), -1);
  for (size_t k = 0; k < knobs_.size(); ++k) {
    const KnobValue* v = wanted.Find(knobs_[k].name);
    if (v != nullptr) want[k] = HalfStepPosition(knobs_[k].values, *v);
  }
  std::optional<Config> best;
  long best_cost = 0;
  for (Config& c : Enumerate()) {
    long cost = 0;  // in half steps
    for (size_t k = 0; k < knobs_.size(); ++k) {
      const KnobValue& v = *c.Find(knobs_[k].name);
      const long at = std::find(knobs_[k].values.begin(), knobs_[k].values.end(), v) - knobs_[k].values.begin();
      cost += want[k] < 0 ? 2 * static_cast<long>(knobs_[k].values.size()) : std::abs(2 * at - want[k]);
    }
    if (!best || cost < best_cost) {
      best = std::move(c);
      best_cost = cost;
    }
  }
  if (!best) return absl::NotFoundError("the config space is empty");
  return *std::move(best);
}

std::vector<Config> ConfigSpace::Neighbours(const Config& config) const {
  std::vector<Config> out;
  for (const KnobDomain& k : knobs_) {
    const KnobValue* v = config.Find(k.name);
    if (v == nullptr) continue;
    auto it = std::find(k.values.begin(), k.values.end(), *v);
    if (it == k.values.end()) continue;
    size_t at = static_cast<size_t>(it - k.values.begin());
    for (size_t j : {at - 1, at + 1}) {
      if (j >= k.values.size()) continue;  // also catches at - 1 wrapping below 0
      Config n = config;
      n.Set(k.name, k.values[j]);
      if (Satisfies(n)) out.push_back(std::move(n));
    }
  }
  return out;
}

}  // namespace opsched
