#include "core/l2_flush.h"

#include <fmt/format.h>

namespace opsched {

std::string_view L2FlushName(L2Flush flush) {
  switch (flush) {
    case L2Flush::kRead: return "read";
    case L2Flush::kOverwrite: return "overwrite";
    case L2Flush::kNone: return "none";
  }
  return "read";
}

StatusOr<L2Flush> ParseL2Flush(std::string_view name) {
  for (L2Flush f : {L2Flush::kRead, L2Flush::kOverwrite, L2Flush::kNone}) {
    if (name == L2FlushName(f)) return f;
  }
  return absl::InvalidArgumentError(
      fmt::format("unknown L2 flush '{}' (read, overwrite or none)", name));
}

}  // namespace opsched
