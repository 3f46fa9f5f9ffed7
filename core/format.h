// fmt support for abseil types: Status (its ToString()) and, where abseil has its own
// string_view (Debian's build), absl::string_view (Status::message()). Kept out of
// status.h so that device code, which nvcc compiles without fmt, can use Status.
#pragma once

#include <string_view>

#include <fmt/format.h>

#include "core/status.h"

// fmt formatting of Status (its ToString()) and, where abseil has its own string_view
// (Debian's build), of absl::string_view (Status::message()).
template <>
struct fmt::formatter<absl::Status> : fmt::formatter<std::string_view> {
  template <typename Context>
  auto format(const absl::Status& s, Context& ctx) const {
    return fmt::formatter<std::string_view>::format(s.ToString(), ctx);
  }
};
#if !defined(ABSL_USES_STD_STRING_VIEW)
template <>
struct fmt::formatter<absl::string_view> : fmt::formatter<std::string_view> {
  template <typename Context>
  auto format(absl::string_view s, Context& ctx) const {
    return fmt::formatter<std::string_view>::format(std::string_view(s.data(), s.size()), ctx);
  }
};
#endif

