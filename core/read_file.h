// Reading a whole file given on a command line (a suite, a baseline, JSON lines), with
// the errors a user can act on: missing, not a regular file (a directory), unreadable.
#pragma once

#include <string>
#include <string_view>

#include "core/status.h"

namespace opsched {

// The bytes of the regular file at `path`. NotFound when it does not exist,
// InvalidArgument when it is a directory or another non-regular file; `what` names the
// file in messages ("suite", "baseline").
StatusOr<std::string> ReadFile(const std::string& path, std::string_view what);

}  // namespace opsched
