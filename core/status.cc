#include "core/status.h"

#include <fmt/format.h>

namespace opsched {

Status Annotate(const Status& status, std::string_view context) {
  if (status.ok()) return status;
  return Status(status.code(),
                fmt::format("{}: {}", context, std::string(status.message())));
}

}  // namespace opsched
