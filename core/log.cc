#include "core/log.h"

#include <cstdlib>

#include <spdlog/sinks/stdout_color_sinks.h>

namespace opsched {

spdlog::logger& Log() {
  static spdlog::logger* logger = [] {
    auto made = spdlog::stderr_color_mt("opsched");
    made->set_pattern("[opsched %l] %v");
    const char* level = std::getenv("OPSCHED_LOG_LEVEL");
    made->set_level(level ? spdlog::level::from_str(level) : spdlog::level::warn);
    // Kept for the life of the process (spdlog's registry holds it too).
    return new std::shared_ptr<spdlog::logger>(made);
  }()->get();
  return *logger;
}

}  // namespace opsched
