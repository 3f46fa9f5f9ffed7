// Config: the knob values of one implementation ("block=256,items=4,vector=4"). Knobs
// are kept sorted by name so equal configs compare, print and hash equal.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <variant>

#include "absl/container/inlined_vector.h"
#include "core/status.h"

namespace opsched {

using KnobValue = std::variant<int64_t, std::string>;

std::string KnobValueToString(const KnobValue& value);

struct Knob {
  std::string name;
  KnobValue value;
  bool operator==(const Knob& o) const { return name == o.name && value == o.value; }
  bool operator<(const Knob& o) const { return name < o.name; }
};

class Config {
 public:
  Config() = default;

  // Sets (or replaces) a knob, keeping knobs sorted by name.
  Config& Set(std::string_view name, KnobValue value);
  const KnobValue* Find(std::string_view name) const;
  // The integer knob `name`, or `fallback` when the config does not set it.
  int64_t GetInt(std::string_view name, int64_t fallback) const;
  StatusOr<int64_t> GetInt(std::string_view name) const;
  StatusOr<std::string_view> GetString(std::string_view name) const;

  const absl::InlinedVector<Knob, 6>& knobs() const { return knobs_; }
  bool empty() const { return knobs_.empty(); }

  // "block=256,vector=4"; "-" for a config without knobs.
  std::string ToString() const;
  uint64_t hash() const;

  bool operator==(const Config& o) const { return knobs_ == o.knobs_; }
  bool operator!=(const Config& o) const { return !(*this == o); }

 private:
  absl::InlinedVector<Knob, 6> knobs_;
};

// A candidate choice for a workload: an implementation (by its registered name) and one
// config of its space — what the tuner measures and the selector ranks.
struct Candidate {
  std::string implementation;
  Config config;
  bool operator==(const Candidate& o) const { return implementation == o.implementation && config == o.config; }
};

// Parses Config::ToString()'s form ("-" or "a=1,b=word").
StatusOr<Config> ParseConfig(std::string_view text);

}  // namespace opsched
