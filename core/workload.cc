#include "core/workload.h"

#include <cctype>
#include <charconv>
#include <cmath>

#include "core/format.h"

#include "absl/hash/hash.h"
#include "core/stable_hash.h"

namespace opsched {

std::string_view AttrTypeName(const AttrValue& value) {
  switch (value.index()) {
    case 0:
      return "int";
    case 1:
      return "float";
    case 2:
      return "bool";
    case 3:
      return "string";
    default:
      return "ints";
  }
}

std::string AttrValueToString(const AttrValue& value) {
  if (const auto* i = std::get_if<int64_t>(&value)) return std::to_string(*i);
  if (const auto* d = std::get_if<double>(&value)) {
    // Shortest text that reads back as the same double, always with a '.' or exponent
    // so it reads back as a float.
    char buf[64];
    auto [end, ec] = std::to_chars(buf, buf + sizeof buf, *d);
    std::string text(buf, ec == std::errc() ? end : buf);
    if (text.find_first_of(".eEn") == std::string::npos) text += ".0";
    return text;
  }
  if (const auto* b = std::get_if<bool>(&value)) return *b ? "true" : "false";
  if (const auto* s = std::get_if<std::string>(&value)) {
    // A word prints bare; anything else (blanks, operators, a word that would read back
    // as a bool) in double quotes, which the parser reads back as this string.
    bool word = !s->empty() && (std::isalpha(static_cast<unsigned char>((*s)[0])) || (*s)[0] == '_') &&
                *s != "true" && *s != "false";
    for (char c : *s) {
      if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '-' || c == '.')) word = false;
    }
    return word ? *s : "\"" + *s + "\"";
  }
  const Dims& list = std::get<Dims>(value);
  // An empty list needs brackets to read back (a one-element list prints as its integer,
  // which every op accepts for a list).
  if (list.empty()) return "[]";
  return fmt::format("{}", fmt::join(list, ","));
}

Workload& Workload::SetTensor(std::string_view name, const TensorDesc& desc) {
  for (TensorArg& t : tensors_) {
    if (t.name == name) {
      t.desc = desc;
      return *this;
    }
  }
  tensors_.push_back(TensorArg{std::string(name), desc});
  return *this;
}

Workload& Workload::SetAttr(std::string_view name, AttrValue value) {
  for (Attr& a : attrs_) {
    if (a.name == name) {
      a.value = std::move(value);
      return *this;
    }
  }
  attrs_.push_back(Attr{std::string(name), std::move(value)});
  return *this;
}

void Workload::Clear() {
  op_.clear();
  tensors_.clear();
  attrs_.clear();
}

const TensorDesc* Workload::FindTensor(std::string_view name) const {
  for (const TensorArg& t : tensors_) {
    if (t.name == name) return &t.desc;
  }
  return nullptr;
}

const AttrValue* Workload::FindAttr(std::string_view name) const {
  for (const Attr& a : attrs_) {
    if (a.name == name) return &a.value;
  }
  return nullptr;
}

namespace {

template <typename T>
StatusOr<T> GetTyped(const Workload& w, std::string_view name, std::string_view type) {
  const AttrValue* v = w.FindAttr(name);
  if (v == nullptr) {
    return absl::InvalidArgumentError(fmt::format("{}: missing attribute '{}'", w.op(), name));
  }
  if (const T* typed = std::get_if<T>(v)) return *typed;
  return absl::InvalidArgumentError(fmt::format("{}: attribute '{}' is {}, expected {}", w.op(),
                                                name, AttrTypeName(*v), type));
}

}  // namespace

StatusOr<int64_t> Workload::GetInt(std::string_view name) const {
  return GetTyped<int64_t>(*this, name, "int");
}
StatusOr<double> Workload::GetFloat(std::string_view name) const {
  const AttrValue* v = FindAttr(name);
  if (v != nullptr) {
    if (const auto* i = std::get_if<int64_t>(v)) return static_cast<double>(*i);
  }
  return GetTyped<double>(*this, name, "float");
}
StatusOr<bool> Workload::GetBool(std::string_view name) const {
  return GetTyped<bool>(*this, name, "bool");
}
StatusOr<std::string_view> Workload::GetString(std::string_view name) const {
  const AttrValue* v = FindAttr(name);
  if (v != nullptr) {
    if (const auto* s = std::get_if<std::string>(v)) return std::string_view(*s);
  }
  return GetTyped<std::string>(*this, name, "string").status();  // the error
}
StatusOr<Dims> Workload::GetInts(std::string_view name) const {
  const AttrValue* v = FindAttr(name);
  if (v != nullptr) {
    if (const auto* i = std::get_if<int64_t>(v)) return Dims{*i};
  }
  return GetTyped<Dims>(*this, name, "ints");
}

std::string Workload::ToString() const {
  std::string out = op_;
  for (const TensorArg& t : tensors_) out += fmt::format(" {}={}", t.name, t.desc.ToString());
  for (const Attr& a : attrs_) out += fmt::format(" {}={}", a.name, AttrValueToString(a.value));
  return out;
}

uint64_t Workload::hash() const {
  StableHasher h;
  h.String(op_).Int(static_cast<int64_t>(tensors_.size()));
  for (const TensorArg& t : tensors_) {
    h.String(t.name).Int(static_cast<int64_t>(t.desc.dtype())).Int(t.desc.rank());
    for (int i = 0; i < t.desc.rank(); ++i) h.Int(t.desc.dim(i)).Int(t.desc.stride(i));
  }
  h.Int(static_cast<int64_t>(attrs_.size()));
  for (const Attr& a : attrs_) {
    h.String(a.name).Int(static_cast<int64_t>(a.value.index()));
    std::visit(
        [&h](const auto& v) {
          using T = std::decay_t<decltype(v)>;
          if constexpr (std::is_same_v<T, int64_t> || std::is_same_v<T, bool>) {
            h.Int(static_cast<int64_t>(v));
          } else if constexpr (std::is_same_v<T, double>) {
            h.Double(v);
          } else if constexpr (std::is_same_v<T, std::string>) {
            h.String(v);
          } else {
            h.Int(static_cast<int64_t>(v.size()));
            for (int64_t x : v) h.Int(x);
          }
        },
        a.value);
  }
  return h.value();
}

namespace {

// Every field of a workload in one hash state (a state per field costs a finalisation each).
struct HashView {
  const Workload& w;
  template <typename H>
  friend H AbslHashValue(H h, const HashView& v) {
    h = H::combine(std::move(h), v.w.op());
    for (const TensorArg& t : v.w.tensors()) {
      h = H::combine(std::move(h), t.name, static_cast<int>(t.desc.dtype()));
      h = H::combine_contiguous(std::move(h), t.desc.shape().data(), t.desc.shape().size());
      h = H::combine_contiguous(std::move(h), t.desc.strides().data(), t.desc.strides().size());
    }
    for (const Attr& a : v.w.attrs()) {
      h = H::combine(std::move(h), a.name, a.value.index());
      std::visit(
          [&h](const auto& value) {
            using T = std::decay_t<decltype(value)>;
            if constexpr (std::is_same_v<T, Dims>) {
              h = H::combine_contiguous(std::move(h), value.data(), value.size());
            } else {
              h = H::combine(std::move(h), value);
            }
          },
          a.value);
    }
    return h;
  }
};

}  // namespace

uint64_t Workload::FastHash() const { return absl::HashOf(HashView{*this}); }

std::vector<double> Workload::Features() const {
  std::vector<double> f;
  for (const TensorArg& t : tensors_) {
    f.push_back(std::log2(1.0 + static_cast<double>(t.desc.numel())));
    f.push_back(t.desc.rank());
    for (int i = 0; i < 6; ++i) {
      f.push_back(i < t.desc.rank() ? std::log2(1.0 + static_cast<double>(t.desc.dim(i))) : 0.0);
    }
  }
  for (const Attr& a : attrs_) {
    if (const auto* i = std::get_if<int64_t>(&a.value)) f.push_back(static_cast<double>(*i));
    if (const auto* d = std::get_if<double>(&a.value)) f.push_back(*d);
    if (const auto* b = std::get_if<bool>(&a.value)) f.push_back(*b ? 1.0 : 0.0);
    if (const auto* v = std::get_if<Dims>(&a.value)) {
      for (int64_t x : *v) f.push_back(static_cast<double>(x));
    }
  }
  return f;
}

}  // namespace opsched
