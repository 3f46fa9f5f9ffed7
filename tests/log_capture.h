// LogCapture: collects what opsched logs (warnings and up) while it lives.
#pragma once

#include <memory>
#include <sstream>
#include <string>

#include <spdlog/sinks/ostream_sink.h>

#include "core/log.h"

namespace opsched::testing {

class LogCapture {
 public:
  LogCapture() : sink_(std::make_shared<spdlog::sinks::ostream_sink_st>(stream_)) {
    sink_->set_pattern("%l %v");
    Log().sinks().push_back(sink_);
  }
  ~LogCapture() {
    auto& sinks = Log().sinks();
    sinks.erase(std::remove(sinks.begin(), sinks.end(), sink_), sinks.end());
  }
  std::string text() const { return stream_.str(); }
  // Lines containing `needle`.
  int Count(const std::string& needle) const {
    int n = 0;
    std::istringstream in(stream_.str());
    for (std::string line; std::getline(in, line);) n += line.find(needle) != std::string::npos;
    return n;
  }

 private:
  std::ostringstream stream_;
  std::shared_ptr<spdlog::sinks::ostream_sink_st> sink_;
};

}  // namespace opsched::testing
