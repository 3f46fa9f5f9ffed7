#include "core/table.h"

#include <algorithm>
#include <numeric>

#include "core/format.h"

namespace opsched {
namespace {

// The code point at text[i] and its length in bytes; an invalid or truncated sequence is
// one byte of its own.
size_t Decode(std::string_view text, size_t i, char32_t* code_point) {
  const unsigned char lead = static_cast<unsigned char>(text[i]);
  size_t length = lead < 0x80 ? 1 : (lead >> 5) == 0x6 ? 2 : (lead >> 4) == 0xe ? 3 : (lead >> 3) == 0x1e ? 4 : 0;
  if (length == 0 || i + length > text.size()) {
    *code_point = lead;
    return 1;
  }
  char32_t cp = length == 1 ? lead : lead & (0x7f >> length);
  for (size_t k = 1; k < length; ++k) {
    const unsigned char next = static_cast<unsigned char>(text[i + k]);
    if ((next & 0xc0) != 0x80) {
      *code_point = lead;
      return 1;
    }
    cp = (cp << 6) | (next & 0x3f);
  }
  *code_point = cp;
  return length;
}

bool Within(char32_t cp, char32_t first, char32_t last) { return cp >= first && cp <= last; }

// Columns a code point takes in a terminal (a small wcwidth: combining marks and
// zero-width characters 0, East Asian wide and fullwidth forms and emoji 2, else 1).
size_t CodePointWidth(char32_t cp) {
  if (Within(cp, 0x0300, 0x036f) || Within(cp, 0x1ab0, 0x1aff) || Within(cp, 0x1dc0, 0x1dff) ||
      Within(cp, 0x200b, 0x200f) || Within(cp, 0x20d0, 0x20ff) || Within(cp, 0xfe00, 0xfe0f) ||
      Within(cp, 0xfe20, 0xfe2f)) {
    return 0;
  }
  if (Within(cp, 0x1100, 0x115f) || Within(cp, 0x2e80, 0x303e) || Within(cp, 0x3041, 0x33ff) ||
      Within(cp, 0x3400, 0x4dbf) || Within(cp, 0x4e00, 0x9fff) || Within(cp, 0xa000, 0xa4cf) ||
      Within(cp, 0xac00, 0xd7a3) || Within(cp, 0xf900, 0xfaff) || Within(cp, 0xfe30, 0xfe4f) ||
      Within(cp, 0xff00, 0xff60) || Within(cp, 0xffe0, 0xffe6) || Within(cp, 0x1f300, 0x1f64f) ||
      Within(cp, 0x1f900, 0x1f9ff) || Within(cp, 0x20000, 0x2fffd) || Within(cp, 0x30000, 0x3fffd)) {
    return 2;
  }
  return 1;
}

constexpr std::string_view kEllipsis = "...";
constexpr size_t kGap = 2;  // spaces between columns

}  // namespace

size_t DisplayWidth(std::string_view text) {
  size_t width = 0;
  for (size_t i = 0; i < text.size();) {
    char32_t cp = 0;
    i += Decode(text, i, &cp);
    width += CodePointWidth(cp);
  }
  return width;
}

std::string TruncateToWidth(std::string_view text, size_t width) {
  if (DisplayWidth(text) <= width) return std::string(text);
  if (width <= kEllipsis.size()) return std::string(kEllipsis.substr(0, width));
  const size_t room = width - kEllipsis.size();
  size_t used = 0, end = 0;
  while (end < text.size()) {
    char32_t cp = 0;
    const size_t length = Decode(text, end, &cp);
    const size_t w = CodePointWidth(cp);
    if (used + w > room) break;
    used += w;
    end += length;
  }
  return std::string(text.substr(0, end)) + std::string(kEllipsis);
}

std::string Figure(double value, const char* format) {
  return value > 0 ? fmt::format(fmt::runtime(format), value) : std::string("-");
}

std::vector<size_t> Table::Layout(size_t width) const {
  const size_t n = columns_.size();
  std::vector<size_t> natural(n, 0);
  for (size_t i = 0; i < n; ++i) natural[i] = DisplayWidth(columns_[i].header);
  for (const auto& row : rows_) {
    // A short row's last cell runs on: it does not size its column.
    const size_t measured = row.size() < n ? row.size() - std::min<size_t>(row.size(), 1) : n;
    for (size_t i = 0; i < measured && i < row.size(); ++i) natural[i] = std::max(natural[i], DisplayWidth(row[i]));
  }
  std::vector<bool> kept(n, true);
  auto total = [&](bool at_minimum) {
    size_t sum = 0, count = 0;
    for (size_t i = 0; i < n; ++i) {
      if (!kept[i]) continue;
      const Column& c = columns_[i];
      sum += at_minimum && c.min_width > 0 ? std::min(natural[i], c.min_width) : natural[i];
      ++count;
    }
    return sum + (count > 0 ? (count - 1) * kGap : 0);
  };
  std::vector<size_t> widths = natural;
  if (width == 0 || total(false) <= width) return widths;
  // Least important first; among equals, the rightmost first.
  std::vector<size_t> order(n);
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) {
    return columns_[a].importance != columns_[b].importance ? columns_[a].importance < columns_[b].importance : a > b;
  });
  // Drop only what cutting cannot save.
  for (size_t i : order) {
    if (total(true) <= width) break;
    if (columns_[i].droppable) kept[i] = false;
  }
  size_t excess = total(false) > width ? total(false) - width : 0;
  for (size_t i : order) {
    if (excess == 0) break;
    const Column& c = columns_[i];
    if (!kept[i] || c.min_width == 0 || natural[i] <= c.min_width) continue;
    const size_t cut = std::min(excess, natural[i] - c.min_width);
    widths[i] -= cut;
    excess -= cut;
  }
  for (size_t i = 0; i < n; ++i) {
    if (!kept[i]) widths[i] = kDropped;
  }
  return widths;
}

std::string Table::ToString(size_t width) const {
  const std::vector<size_t> widths = Layout(width);
  const size_t n = columns_.size();
  std::string out;
  auto emit = [&](const std::vector<std::string>& row, bool rule) {
    std::string line;
    size_t at = 0;  // display columns written
    bool first = true;
    const size_t cells = rule ? n : std::min(row.size(), n);
    for (size_t i = 0; i < cells; ++i) {
      const bool runs_on = !rule && row.size() < n && i + 1 == row.size();
      if (widths[i] == kDropped && !runs_on) continue;
      if (!first) {
        line += std::string(kGap, ' ');
        at += kGap;
      }
      first = false;
      if (runs_on) {
        // The running-on cell: what is left of the line, yet never fewer than 20 columns.
        constexpr size_t kLeast = 20;
        line += width == 0 ? row[i] : TruncateToWidth(row[i], std::max(width > at ? width - at : 0, kLeast));
        break;
      }
      const std::string cell = rule ? std::string(widths[i], '-') : TruncateToWidth(row[i], widths[i]);
      const size_t pad = widths[i] - DisplayWidth(cell);
      if (columns_[i].right) line += std::string(pad, ' ');
      line += cell;
      if (!columns_[i].right) line += std::string(pad, ' ');
      at += widths[i];
    }
    while (!line.empty() && line.back() == ' ') line.pop_back();
    out += line + "\n";
  };
  std::vector<std::string> header;
  for (const Column& c : columns_) header.push_back(c.header);
  emit(header, false);
  emit({}, true);
  for (const auto& row : rows_) emit(row, false);
  return out;
}

}  // namespace opsched
