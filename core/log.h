// opsched's logger: spdlog to stderr, level from OPSCHED_LOG_LEVEL (trace, debug, info,
// warn, error, off; default warn).
#pragma once

#include <spdlog/spdlog.h>

namespace opsched {

spdlog::logger& Log();

}  // namespace opsched
