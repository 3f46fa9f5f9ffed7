// Test helper for the records tool's functions, which print to a FILE*.
#pragma once

#include <cstdio>
#include <string>
#include <utility>

namespace opsched::testing {

// Runs `fn(FILE*)` and returns (exit code, what it printed).
template <typename Fn>
std::pair<int, std::string> Capture(Fn fn) {
  std::FILE* f = std::tmpfile();
  int code = fn(f);
  std::fflush(f);
  std::rewind(f);
  std::string text;
  char buf[4096];
  size_t n;
  while ((n = std::fread(buf, 1, sizeof buf, f)) > 0) text.append(buf, n);
  std::fclose(f);
  return {code, text};
}

}  // namespace opsched::testing
