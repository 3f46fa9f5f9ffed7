// Status and StatusOr: abseil's, under opsched's names, plus the two propagation macros.
// Errors cross the public API as Status values; nothing in opsched throws or aborts.
#pragma once

#include <string_view>

#include "absl/status/status.h"
#include "absl/status/statusor.h"

namespace opsched {

using Status = absl::Status;
using StatusCode = absl::StatusCode;
template <typename T>
using StatusOr = absl::StatusOr<T>;

// The message of `status` as a std::string_view (Debian's abseil has its own).
inline std::string_view Message(const Status& status) {
  return std::string_view(status.message().data(), status.message().size());
}

// Returns `status` with `context: ` prefixed to its message (code and payloads kept).
Status Annotate(const Status& status, std::string_view context);

}  // namespace opsched

#define OPSCHED_STATUS_CONCAT_INNER(a, b) a##b
#define OPSCHED_STATUS_CONCAT(a, b) OPSCHED_STATUS_CONCAT_INNER(a, b)

// Returns from the enclosing function when `expr` (a Status) is not OK.
#define OPSCHED_RETURN_IF_ERROR(expr)                    \
  do {                                                   \
    ::opsched::Status opsched_status_ = (expr);          \
    if (!opsched_status_.ok()) return opsched_status_;   \
  } while (0)

// `lhs = value of expr` (a StatusOr), or returns its error from the enclosing function.
#define OPSCHED_ASSIGN_OR_RETURN(lhs, expr)                                            \
  OPSCHED_ASSIGN_OR_RETURN_IMPL(OPSCHED_STATUS_CONCAT(opsched_statusor_, __LINE__), lhs, \
                                expr)
#define OPSCHED_ASSIGN_OR_RETURN_IMPL(tmp, lhs, expr) \
  auto tmp = (expr);                                  \
  if (!tmp.ok()) return tmp.status();                 \
  lhs = std::move(tmp).value()
