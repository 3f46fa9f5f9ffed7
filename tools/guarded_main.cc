#include "tools/guarded_main.h"

#include <cstdio>
#include <exception>
#include <new>

namespace opsched::tools {

int RunGuarded(const std::function<int()>& body) {
  try {
    return body();
  } catch (const std::bad_alloc&) {
    std::fputs("opsched: out of memory\n", stderr);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "opsched: internal error: %s\n", e.what());
  } catch (...) {
    std::fputs("opsched: internal error: an unknown exception\n", stderr);
  }
  return 2;
}

}  // namespace opsched::tools
