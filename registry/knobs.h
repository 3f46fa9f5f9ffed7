// Knobs<T>: an implementation's knobs, declared once over the struct T that holds their
// typed values. One declaration gives
//   - the ConfigSpace (Space): each knob's domain, its declared default (the value in
//     the defaults struct) as the space's preferred value, and the constraints, written
//     over T rather than over strings;
//   - the parsing of a Config into T (Parse, done once in Prepare): a knob the config
//     leaves out takes its declared default (a required knob has none and must be set),
//     a knob the declaration lacks or a value of the wrong type is an error;
//   - the implementation's default config: the space's preferred values
//     (Implementation::DefaultConfig), which rules without a config of their own and
//     the dispatcher's last resort take;
//   - the typed values as a config that sets every knob (ToConfig).
// So a knob's name, type and default live in one place: no `GetInt(name, fallback)` in
// Run that could disagree with the space.
//
//   struct SortedKnobs { int block = 256; int copy_block = 256; };
//   Knobs<SortedKnobs> knobs;
//   knobs.Int("block", &SortedKnobs::block, {128, 256, 512})
//       .Int("copy_block", &SortedKnobs::copy_block, {256, 1024})
//       .Constrain("block <= copy_block", [](const SortedKnobs& k) { return k.block <= k.copy_block; });
//
// Domains and defaults may depend on the workload: an implementation builds its Knobs<T>
// from the workload and target (copying is cheap), and Space and Prepare use the same
// function. Parse checks names and types, not domains or constraints: ConfigSpace::Check
// does that where a config is chosen.
#pragma once

#include <algorithm>
#include <cstdint>
#include <functional>
#include <limits>
#include <memory>
#include <string>
#include <type_traits>
#include <utility>
#include <variant>
#include <vector>

#include "core/config.h"
#include "core/format.h"
#include "core/space.h"
#include "core/status.h"

namespace opsched {

// Whether a config may leave a knob out (it takes the declared default) or must set it:
// a knob without a meaningful default, such as a vendor library's algorithm.
enum class KnobPresence { kOptional, kRequired };

template <typename T>
class Knobs {
 public:
  using IntField = std::variant<int T::*, int64_t T::*, bool T::*>;  // a bool knob's values are 0 and 1
  using WordField = std::string T::*;

  explicit Knobs(T defaults = T{}) : defaults_(std::move(defaults)) {}

  // An integer knob stored in `field`, with its domain in a meaningful order (neighbours
  // are adjacent).
  Knobs& Int(std::string name, IntField field, std::vector<int64_t> domain,
             KnobPresence presence = KnobPresence::kOptional) {
    std::vector<KnobValue> values(domain.begin(), domain.end());
    entries_.push_back(Entry{std::move(name), field, std::move(values), presence});
    return *this;
  }
  // A word knob (an algorithm's name, a tile shape).
  Knobs& Word(std::string name, WordField field, std::vector<std::string> domain,
              KnobPresence presence = KnobPresence::kOptional) {
    std::vector<KnobValue> values(domain.begin(), domain.end());
    entries_.push_back(Entry{std::move(name), field, std::move(values), presence});
    return *this;
  }
  // A rule between knobs that every legal config satisfies; `description` is shown when
  // a config breaks it.
  Knobs& Constrain(std::string description, std::function<bool(const T&)> holds) {
    constraints_.push_back({std::move(description), std::move(holds)});
    return *this;
  }

  const T& defaults() const { return defaults_; }

  // The legal configs: every declared knob over its domain, the optional knobs' defaults
  // preferred, the constraints applied to the parsed values.
  ConfigSpace Space() const {
    ConfigSpace space;
    for (const Entry& e : entries_) {
      if (e.presence == KnobPresence::kOptional) {
        space.Add(e.name, e.domain, Get(defaults_, e));
      } else {
        space.Add(e.name, e.domain);
      }
    }
    if (constraints_.empty()) return space;
    // The constraints see parsed values; a config that does not parse breaks them all.
    auto parser = std::make_shared<Knobs<T>>(*this);
    parser->constraints_.clear();
    std::shared_ptr<const Knobs<T>> self = std::move(parser);
    for (const auto& [description, holds] : constraints_) {
      space.Constrain(description, [self, holds = holds](const Config& c) {
        StatusOr<T> values = self->Parse(c);
        return values.ok() && holds(*values);
      });
    }
    return space;
  }

  // The typed values of `config`.
  StatusOr<T> Parse(const Config& config) const {
    for (const Knob& knob : config.knobs()) {
      const bool declared =
          std::any_of(entries_.begin(), entries_.end(), [&](const Entry& e) { return e.name == knob.name; });
      if (!declared) {
        return absl::InvalidArgumentError(
            fmt::format("config {} sets knob '{}'; the knobs are: {}", config.ToString(), knob.name, Names()));
      }
    }
    T values = defaults_;
    for (const Entry& e : entries_) {
      const KnobValue* value = config.Find(e.name);
      if (value == nullptr) {
        if (e.presence == KnobPresence::kRequired) {
          return absl::InvalidArgumentError(fmt::format("config {} lacks knob '{}'", config.ToString(), e.name));
        }
        continue;
      }
      OPSCHED_RETURN_IF_ERROR(Set(values, e, *value));
    }
    return values;
  }

  // `values` as a config that sets every declared knob.
  Config ToConfig(const T& values) const {
    Config config;
    for (const Entry& e : entries_) config.Set(e.name, Get(values, e));
    return config;
  }

 private:
  struct Entry {
    std::string name;
    std::variant<IntField, WordField> field;
    std::vector<KnobValue> domain;
    KnobPresence presence;
  };
  std::string Names() const {
    std::string names;
    for (const Entry& e : entries_) names += (names.empty() ? "" : ", ") + e.name;
    return names.empty() ? "none" : names;
  }

  static KnobValue Get(const T& values, const Entry& e) {
    if (const WordField* word = std::get_if<WordField>(&e.field)) return values.*(*word);
    return std::visit([&](auto member) { return KnobValue(static_cast<int64_t>(values.*member)); },
                      std::get<IntField>(e.field));
  }

  static Status Set(T& values, const Entry& e, const KnobValue& value) {
    if (const WordField* word = std::get_if<WordField>(&e.field)) {
      const std::string* text = std::get_if<std::string>(&value);
      if (text == nullptr) {
        return absl::InvalidArgumentError(
            fmt::format("knob {}={} takes a word, not a number", e.name, KnobValueToString(value)));
      }
      values.*(*word) = *text;
      return absl::OkStatus();
    }
    const int64_t* number = std::get_if<int64_t>(&value);
    if (number == nullptr) {
      return absl::InvalidArgumentError(
          fmt::format("knob {}={} takes an integer", e.name, KnobValueToString(value)));
    }
    return std::visit(
        [&](auto member) -> Status {
          using Field = std::remove_reference_t<decltype(values.*member)>;
          if constexpr (std::is_same_v<Field, bool>) {
            if (*number != 0 && *number != 1) {
              return absl::InvalidArgumentError(fmt::format("knob {}={} is a flag: 0 or 1", e.name, *number));
            }
          } else if (*number < std::numeric_limits<Field>::min() || *number > std::numeric_limits<Field>::max()) {
            return absl::InvalidArgumentError(fmt::format("knob {}={} is out of range", e.name, *number));
          }
          values.*member = static_cast<Field>(*number);
          return absl::OkStatus();
        },
        std::get<IntField>(e.field));
  }

  T defaults_;
  std::vector<Entry> entries_;
  std::vector<std::pair<std::string, std::function<bool(const T&)>>> constraints_;
};

// The knobs of an implementation that has none: its space is the one empty config, and
// Parse refuses a config that sets any knob.
struct NoKnobs {};

}  // namespace opsched
