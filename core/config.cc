#include "core/config.h"

#include <algorithm>
#include <charconv>

#include "core/format.h"

#include "core/stable_hash.h"

namespace opsched {

std::string KnobValueToString(const KnobValue& value) {
  if (const auto* i = std::get_if<int64_t>(&value)) return std::to_string(*i);
  return std::get<std::string>(value);
}

Config& Config::Set(std::string_view name, KnobValue value) {
  auto it = std::lower_bound(knobs_.begin(), knobs_.end(), name,
                             [](const Knob& k, std::string_view n) { return k.name < n; });
  if (it != knobs_.end() && it->name == name) {
    it->value = std::move(value);
  } else {
    knobs_.insert(it, Knob{std::string(name), std::move(value)});
  }
  return *this;
}

const KnobValue* Config::Find(std::string_view name) const {
  for (const Knob& k : knobs_) {
    if (k.name == name) return &k.value;
  }
  return nullptr;
}

int64_t Config::GetInt(std::string_view name, int64_t fallback) const {
  const KnobValue* v = Find(name);
  if (v == nullptr) return fallback;
  const auto* i = std::get_if<int64_t>(v);
  return i ? *i : fallback;
}

StatusOr<int64_t> Config::GetInt(std::string_view name) const {
  const KnobValue* v = Find(name);
  const int64_t* i = v ? std::get_if<int64_t>(v) : nullptr;
  if (i == nullptr) {
    return absl::InvalidArgumentError(
        fmt::format("config {} has no integer knob '{}'", ToString(), name));
  }
  return *i;
}

StatusOr<std::string_view> Config::GetString(std::string_view name) const {
  const KnobValue* v = Find(name);
  const std::string* s = v ? std::get_if<std::string>(v) : nullptr;
  if (s == nullptr) {
    return absl::InvalidArgumentError(
        fmt::format("config {} has no word knob '{}'", ToString(), name));
  }
  return std::string_view(*s);
}

std::string Config::ToString() const {
  if (knobs_.empty()) return "-";
  std::string out;
  for (const Knob& k : knobs_) {
    if (!out.empty()) out += ',';
    out += k.name;
    out += '=';
    out += KnobValueToString(k.value);
  }
  return out;
}

uint64_t Config::hash() const {
  StableHasher h;
  h.Int(static_cast<int64_t>(knobs_.size()));
  for (const Knob& k : knobs_) {
    h.String(k.name).Int(static_cast<int64_t>(k.value.index()));
    if (const auto* i = std::get_if<int64_t>(&k.value)) {
      h.Int(*i);
    } else {
      h.String(std::get<std::string>(k.value));
    }
  }
  return h.value();
}

StatusOr<Config> ParseConfig(std::string_view text) {
  Config config;
  if (text == "-" || text.empty()) return config;
  size_t pos = 0;
  while (pos <= text.size()) {
    size_t comma = text.find(',', pos);
    std::string_view item =
        text.substr(pos, comma == std::string_view::npos ? std::string_view::npos : comma - pos);
    size_t eq = item.find('=');
    if (eq == std::string_view::npos || eq == 0 || eq + 1 == item.size()) {
      return absl::InvalidArgumentError(fmt::format("bad knob '{}' in config '{}'", item, text));
    }
    std::string_view name = item.substr(0, eq);
    std::string_view value = item.substr(eq + 1);
    if (config.Find(name) != nullptr) {
      return absl::InvalidArgumentError(fmt::format("knob '{}' is given twice", name));
    }
    int64_t number;
    auto [end, ec] = std::from_chars(value.data(), value.data() + value.size(), number);
    if (ec == std::errc() && end == value.data() + value.size()) {
      config.Set(name, number);
    } else {
      config.Set(name, std::string(value));
    }
    if (comma == std::string_view::npos) break;
    pos = comma + 1;
  }
  return config;
}

}  // namespace opsched
