#include "core/log.h"

#include <cstdlib>

#include <spdlog/sinks/stdout_color_sinks.h>

namespace opsched {

spdlog::logger& Log() {
  // Kept for the life of the process (spdlog's registry holds it too), and reachable
  // from this static so that leak checkers do not report it.
  static const std::shared_ptr<spdlog::logger>* logger = [] {
    auto made = spdlog::stderr_color_mt("opsched");
    made->set_pattern("[opsched %l] %v");
    const char* level = std::getenv("OPSCHED_LOG_LEVEL");
    made->set_level(level ? spdlog::level::from_str(level) : spdlog::level::warn);
    return new std::shared_ptr<spdlog::logger>(made);
  }();
  return **logger;
}

}  // namespace opsched
