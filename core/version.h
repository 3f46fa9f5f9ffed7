// The opsched version recorded in every record's provenance.
#pragma once

namespace opsched {

inline constexpr const char* kVersion = "0.1.0";

}  // namespace opsched
