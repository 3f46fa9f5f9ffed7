// ConfigSpace: the legal configs of one implementation for one workload — knobs with
// their domains, plus constraints between knobs (e.g. block * items <= 8192, shared
// memory fits). Enumerated by grid search, sampled by random search, walked by
// neighbours in guided search.
#pragma once

#include <functional>
#include <random>
#include <optional>
#include <string>
#include <vector>

#include "core/config.h"
#include "core/status.h"

namespace opsched {

struct KnobDomain {
  std::string name;
  std::vector<KnobValue> values;  // in a meaningful order (neighbours are adjacent)
  // The declared default: what a rule or the last-resort fallback takes when nothing
  // better is known. Unset: the first value.
  std::optional<KnobValue> preferred;
};

struct Constraint {
  std::string description;  // shown when a config breaks it: "block * items <= 8192"
  std::function<bool(const Config&)> holds;
};

class ConfigSpace {
 public:
  ConfigSpace& Add(std::string name, std::vector<KnobValue> values);
  ConfigSpace& AddInts(std::string name, const std::vector<int64_t>& values);
  // A knob with its declared default (one of `values`).
  ConfigSpace& Add(std::string name, std::vector<KnobValue> values, KnobValue preferred);
  ConfigSpace& AddInts(std::string name, const std::vector<int64_t>& values, int64_t preferred);
  ConfigSpace& Constrain(std::string description, std::function<bool(const Config&)> holds);

  const std::vector<KnobDomain>& knobs() const { return knobs_; }
  const std::vector<Constraint>& constraints() const { return constraints_; }

  // Product of the domain sizes (before constraints); 1 for a space without knobs.
  int64_t CartesianSize() const;
  // OK when `config` sets this space's knobs to values in their domains, no other knob,
  // and satisfies every constraint; otherwise an error saying which rule it breaks. A
  // knob it leaves out counts as its declared default where it has one (records written
  // before an implementation gained the knob), and the constraints see that value.
  Status Check(const Config& config) const;
  bool Contains(const Config& config) const { return Check(config).ok(); }
  // Every legal config, in odometer order over the domains (at most `limit`).
  std::vector<Config> Enumerate(size_t limit = 1'000'000) const;
  // A uniformly drawn legal config (rejection sampling); NotFound when none is found
  // in `max_tries` draws.
  StatusOr<Config> Sample(std::mt19937_64& rng, int max_tries = 1000) const;
  // The legal config closest to `wanted`: fewest steps through the knobs' domains. An
  // integer outside an ascending integer domain sits between its neighbours there
  // (columns=32 over {1,2,4,8,16} is half a step from 16), so a rule's value that this
  // workload cannot take becomes the nearest one it can; a knob `wanted` lacks, or a
  // value that cannot be placed, costs one full domain. NotFound when the space is empty.
  StatusOr<Config> Closest(const Config& wanted) const;
  // The declared defaults (a knob without one: its first value) when they are legal,
  // else the legal config closest to them (Closest); NotFound for an empty space. What
  // the dispatcher falls back to for an implementation no rule names, instead of the
  // first config in enumeration order (the smallest of every knob).
  StatusOr<Config> Default() const;
  // Legal configs that differ from `config` in one knob by one step in its domain.
  std::vector<Config> Neighbours(const Config& config) const;

 private:
  bool Satisfies(const Config& config) const;

  std::vector<KnobDomain> knobs_;
  std::vector<Constraint> constraints_;
};

}  // namespace opsched
