// Strategy: an op's rules for choosing an implementation without records — TVM's
// strategy with plevels, as a readable table per op (strategies/<op>_strategy.cc).
// Each rule names an implementation, a priority, a condition on the workload and
// target (in words and as code) and the default config the rule gives it.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "core/config.h"
#include "core/target.h"
#include "core/workload.h"

namespace opsched {

struct StrategyRule {
  int priority = 0;  // higher is tried first
  std::string implementation;
  std::string when;  // the condition in words, e.g. "updates <= 64 elements"
  std::function<bool(const Workload&, const Target&)> holds;
  // The rule's config; none: the implementation's default (ConfigSpace::Default).
  std::function<Config(const Workload&, const Target&)> default_config;
  // Where the rule's implementation, with a given config, fits at all, in words and as
  // code (none: wherever it applies). The scatter slice kernels do not fit sparse updates,
  // cuDNN's Winograd algorithms not 16-bit data: a prediction there is contested, and the
  // floor decides (Dispatcher::TryPredicted).
  std::string fits_when;
  std::function<bool(const Workload&, const Target&, const Config&)> fits;
};

class Strategy {
 public:
  Strategy(std::string op, std::vector<StrategyRule> rules);

  const std::string& op() const { return op_; }
  // Rules by priority, highest first (ties keep table order).
  const std::vector<StrategyRule>& rules() const { return rules_; }

 private:
  std::string op_;
  std::vector<StrategyRule> rules_;
};

// Condition helpers for strategy tables.
inline bool Always(const Workload&, const Target&) { return true; }
inline bool OnCpu(const Target& t) { return t.kind == DeviceKind::kCpu; }
inline bool OnGpu(const Target& t) { return t.kind != DeviceKind::kCpu; }

}  // namespace opsched
