// Parser of the workload text form (see workload.h).
#include <cctype>
#include <charconv>

#include "core/format.h"

#include "core/workload.h"

namespace opsched {
namespace {

Status ErrorAt(size_t column, std::string_view message) {
  return absl::InvalidArgumentError(fmt::format("column {}: {}", column + 1, message));
}

bool IsIdentifier(std::string_view s) {
  if (s.empty() || !(std::isalpha(static_cast<unsigned char>(s[0])) || s[0] == '_')) return false;
  for (char c : s) {
    if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '_')) return false;
  }
  return true;
}

bool IsWord(std::string_view s) {
  if (s.empty() || !(std::isalpha(static_cast<unsigned char>(s[0])) || s[0] == '_')) return false;
  for (char c : s) {
    if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '-' || c == '.')) {
      return false;
    }
  }
  return true;
}

bool ParseInt(std::string_view s, int64_t* out) {
  if (s.empty()) return false;
  auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), *out);
  return ec == std::errc() && end == s.data() + s.size();
}

// Parses "a,b,c" (at least one integer); `column` is where the list starts.
StatusOr<Dims> ParseIntList(std::string_view s, size_t column, std::string_view what) {
  Dims out;
  if (s.empty()) return out;
  size_t offset = 0;
  while (true) {
    size_t comma = s.find(',', offset);
    std::string_view part = s.substr(offset, comma == std::string_view::npos ? s.npos : comma - offset);
    int64_t v;
    if (!ParseInt(part, &v)) {
      return ErrorAt(column + offset,
                     fmt::format("expected an integer in {}, got '{}'", what, part));
    }
    out.push_back(v);
    if (comma == std::string_view::npos) return out;
    offset = comma + 1;
  }
}

// "f32[2,3]" or "f32[2,3]:[1,2]" at `column`.
StatusOr<TensorDesc> ParseTensor(std::string_view text, size_t column) {
  size_t open = text.find('[');
  OPSCHED_ASSIGN_OR_RETURN(DType dtype, ParseDType(text.substr(0, open)));
  size_t close = text.find(']', open);
  if (close == std::string_view::npos) return ErrorAt(column + open, "missing ']'");
  OPSCHED_ASSIGN_OR_RETURN(Dims shape,
                           ParseIntList(text.substr(open + 1, close - open - 1),
                                        column + open + 1, "the shape"));
  for (size_t i = 0; i < shape.size(); ++i) {
    if (shape[i] < 0) return ErrorAt(column + open + 1, "negative dimension");
  }
  std::string_view rest = text.substr(close + 1);
  if (rest.empty()) {
    if (shape.size() > TensorDesc::kMaxRank) {
      return ErrorAt(column, fmt::format("rank {} exceeds {}", shape.size(), TensorDesc::kMaxRank));
    }
    StatusOr<TensorDesc> desc = TensorDesc::CheckedContiguous(dtype, shape);
    if (!desc.ok()) return ErrorAt(column, std::string(desc.status().message()));
    return desc;
  }
  size_t rest_col = column + close + 1;
  if (rest.size() < 3 || rest.substr(0, 2) != ":[" || rest.back() != ']') {
    return ErrorAt(rest_col, "expected ':[strides]' or the end of the tensor");
  }
  OPSCHED_ASSIGN_OR_RETURN(Dims strides,
                           ParseIntList(rest.substr(2, rest.size() - 3), rest_col + 2,
                                        "the strides"));
  StatusOr<TensorDesc> desc = TensorDesc::Strided(dtype, shape, strides);
  if (!desc.ok()) return ErrorAt(rest_col, std::string(desc.status().message()));
  return desc;
}

bool LooksLikeTensor(std::string_view value) {
  size_t open = value.find('[');
  return open != std::string_view::npos && open > 0 && IsIdentifier(value.substr(0, open));
}

StatusOr<AttrValue> ParseAttrValue(std::string_view value, size_t column) {
  // A bracketed list: "[]" (empty, as a scalar's reduction axes print) or "[3]".
  if (value.size() >= 2 && value.front() == '[' && value.back() == ']') {
    OPSCHED_ASSIGN_OR_RETURN(Dims list, ParseIntList(value.substr(1, value.size() - 2), column + 1, "the list"));
    return AttrValue(std::move(list));
  }
  if (value == "true") return AttrValue(true);
  if (value == "false") return AttrValue(false);
  int64_t i;
  if (ParseInt(value, &i)) return AttrValue(i);
  if (value.find(',') != std::string_view::npos) {
    OPSCHED_ASSIGN_OR_RETURN(Dims list, ParseIntList(value, column, "the list"));
    return AttrValue(std::move(list));
  }
  if (!value.empty() && (std::isdigit(static_cast<unsigned char>(value[0])) || value[0] == '-' ||
                         value[0] == '.')) {
    double d;
    auto [end, ec] = std::from_chars(value.data(), value.data() + value.size(), d);
    if (ec == std::errc() && end == value.data() + value.size()) return AttrValue(d);
    return ErrorAt(column, fmt::format("bad number '{}'", value));
  }
  if (IsWord(value)) return AttrValue(std::string(value));
  return ErrorAt(column, fmt::format("bad attribute value '{}' (expected a number, a list, "
                                     "true/false or a word)",
                                     value));
}

}  // namespace

std::string EscapeControlCharacters(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (char ch : text) {
    const auto c = static_cast<unsigned char>(ch);
    if (c < 0x20 || c == 0x7f) {
      out += fmt::format("\\x{:02x}", c);
    } else {
      out += ch;
    }
  }
  return out;
}

bool IsBlankOrComment(std::string_view line) {
  size_t first = line.find_first_not_of(" \t\r\n");
  return first == std::string_view::npos || line[first] == '#';
}

StatusOr<Workload> ParseWorkload(std::string_view line) {
  // A '#' starts a comment unless it lies inside a double-quoted string.
  bool quoted = false;
  for (size_t i = 0; i < line.size(); ++i) {
    if (line[i] == '"') quoted = !quoted;
    if (line[i] == '#' && !quoted) {
      line = line.substr(0, i);
      break;
    }
  }
  // A control character (a NUL byte, an escape sequence) is never part of a workload
  // and must not reach a terminal or a table through an error message.
  for (size_t i = 0; i < line.size(); ++i) {
    const auto c = static_cast<unsigned char>(line[i]);
    if ((c < 0x20 && c != '\t' && c != '\r' && c != '\n') || c == 0x7f) {
      return ErrorAt(i, fmt::format("control character 0x{:02x}", c));
    }
  }
  Workload w;
  size_t pos = 0;
  bool first = true;
  while (true) {
    while (pos < line.size() && std::isspace(static_cast<unsigned char>(line[pos]))) ++pos;
    if (pos >= line.size()) break;
    size_t start = pos;
    while (pos < line.size() && !std::isspace(static_cast<unsigned char>(line[pos])) && line[pos] != '"') ++pos;
    // name="a string, blanks allowed": the token runs to the closing quote.
    size_t quote = std::string_view::npos;
    if (pos < line.size() && line[pos] == '"') {
      quote = pos;
      const size_t close = line.find('"', pos + 1);
      if (close == std::string_view::npos) {
        return ErrorAt(quote, "unterminated string (no closing '\"')");
      }
      pos = close + 1;
      if (pos < line.size() && !std::isspace(static_cast<unsigned char>(line[pos]))) {
        return ErrorAt(pos, "expected a blank after the closing '\"'");
      }
    }
    std::string_view token = line.substr(start, pos - start);
    if (first) {
      if (!IsIdentifier(token)) {
        return ErrorAt(start, fmt::format("expected an op name, got '{}'", token));
      }
      w.set_op(token);
      first = false;
      continue;
    }
    size_t eq = token.find('=');
    if (eq == std::string_view::npos) {
      return ErrorAt(start, fmt::format("expected name=value, got '{}'", token));
    }
    std::string_view name = token.substr(0, eq);
    std::string_view value = token.substr(eq + 1);
    if (!IsIdentifier(name)) return ErrorAt(start, fmt::format("bad name '{}'", name));
    if (w.FindTensor(name) != nullptr || w.FindAttr(name) != nullptr) {
      return ErrorAt(start, fmt::format("'{}' is given twice", name));
    }
    if (quote != std::string_view::npos) {
      if (quote != start + eq + 1) return ErrorAt(quote, "a '\"' may only start a value");
      w.SetAttr(name, std::string(value.substr(1, value.size() - 2)));
      continue;
    }
    if (value.empty()) return ErrorAt(start + eq + 1, fmt::format("'{}' has no value", name));
    if (LooksLikeTensor(value)) {
      OPSCHED_ASSIGN_OR_RETURN(TensorDesc desc, ParseTensor(value, start + eq + 1));
      w.SetTensor(name, desc);
    } else {
      OPSCHED_ASSIGN_OR_RETURN(AttrValue attr, ParseAttrValue(value, start + eq + 1));
      w.SetAttr(name, std::move(attr));
    }
  }
  if (first) return ErrorAt(0, "empty workload line");
  return w;
}

}  // namespace opsched
