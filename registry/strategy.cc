#include "registry/strategy.h"

#include <algorithm>

namespace opsched {

Strategy::Strategy(std::string op, std::vector<StrategyRule> rules)
    : op_(std::move(op)), rules_(std::move(rules)) {
  std::stable_sort(rules_.begin(), rules_.end(),
                   [](const StrategyRule& a, const StrategyRule& b) {
                     return a.priority > b.priority;
                   });
}

}  // namespace opsched
