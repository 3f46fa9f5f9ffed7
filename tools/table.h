// Table: aligned plain-text tables for the CLI (records, tune, bench, explain).
#pragma once

#include <cstdio>
#include <string>
#include <vector>

namespace opsched::tools {

class Table {
 public:
  explicit Table(std::vector<std::string> header) : header_(std::move(header)) {}
  void AddRow(std::vector<std::string> row) { rows_.push_back(std::move(row)); }
  size_t rows() const { return rows_.size(); }
  // Columns separated by two spaces, a rule under the header.
  std::string ToString() const;
  void Print(std::FILE* out = stdout) const { std::fputs(ToString().c_str(), out); }

 private:
  std::vector<std::string> header_;
  std::vector<std::vector<std::string>> rows_;
};

}  // namespace opsched::tools
