// Table: the one formatter of the command line's aligned plain-text tables (records, ops,
// tune, bench, study). Widths are display columns, not bytes: a UTF-8 code point takes one
// column ('×' and 'µ' are two bytes, one column), an East Asian wide or emoji code point
// two, a combining mark none.
//
// By default a table fits kTableWidth columns: when its natural width is larger, it drops
// the least important droppable columns it must (only as many as needed for the rest to
// fit once cut), then cuts the shrinkable columns, least important first, each no further
// than its min_width, truncating their cells with "...". ToString(0) prints every column
// in full (the CLI's --wide).
#pragma once

#include <cstdio>
#include <string>
#include <string_view>
#include <vector>

namespace opsched {

inline constexpr size_t kTableWidth = 120;

// Display columns of UTF-8 text (an invalid byte counts as one column).
size_t DisplayWidth(std::string_view text);
// `text` itself when it fits `width` columns, else its longest prefix of whole code points
// that fits with "..." after it.
std::string TruncateToWidth(std::string_view text, size_t width);
// A measured figure for a table cell, formatted with `format` ("{:.2f}"), or "-" where
// there is none (value <= 0: no oracle, no baseline, no heuristic time).
std::string Figure(double value, const char* format);

struct Column {
  std::string header;
  bool right = false;   // right-aligned (numbers)
  size_t min_width = 0;  // > 0: the column may be cut down to this many columns
  bool droppable = false;
  int importance = 0;    // columns of lower importance are cut and dropped first
};

class Table {
 public:
  explicit Table(std::vector<Column> columns) : columns_(std::move(columns)) {}
  // A row with fewer cells than columns: its last cell runs on to the end of the line (an
  // error in place of figures) and does not widen its column.
  void AddRow(std::vector<std::string> row) { rows_.push_back(std::move(row)); }
  size_t rows() const { return rows_.size(); }
  // Columns separated by two spaces, a rule under the header; at most `width` columns
  // wide where cutting and dropping allow (0: every column in full).
  std::string ToString(size_t width = kTableWidth) const;
  void Print(std::FILE* out = stdout, size_t width = kTableWidth) const {
    std::fputs(ToString(width).c_str(), out);
  }

 private:
  static constexpr size_t kDropped = static_cast<size_t>(-1);
  // The width of each column in a table at most `width` wide; kDropped for a dropped column.
  std::vector<size_t> Layout(size_t width) const;

  std::vector<Column> columns_;
  std::vector<std::vector<std::string>> rows_;
};

}  // namespace opsched
