// The per-op strategy tables' registration: one function per strategies/*_strategy.cc,
// defined there. RegisterAll() (strategies/register_all.h) calls them.
#pragma once

#include "core/status.h"
#include "registry/registry.h"

namespace opsched {

Status RegisterConv2dStrategies(Registry& registry);  // conv2d, conv2d_bias_act, conv2d_backward
Status RegisterPointwiseStrategy(Registry& registry);
Status RegisterReduceStrategy(Registry& registry);
Status RegisterScatterStrategy(Registry& registry);

}  // namespace opsched
