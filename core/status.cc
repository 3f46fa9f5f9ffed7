#include "core/status.h"

#include <fmt/format.h>

namespace opsched {

Status Annotate(const Status& status, std::string_view context) {
  if (status.ok()) return status;
  Status annotated(status.code(), fmt::format("{}: {}", context, std::string(status.message())));
  // Payloads say what kind of error it is (core/data_error.h): context must not lose them.
  status.ForEachPayload([&](absl::string_view url, const absl::Cord& payload) { annotated.SetPayload(url, payload); });
  return annotated;
}

}  // namespace opsched
