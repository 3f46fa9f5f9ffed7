// The test-only op "bump" and its implementations (test_impls.cc), for the tuner tests.
#pragma once

#include "core/status.h"
#include "registry/registry.h"

namespace opsched::testing {

// Adds bump and its misbehaving and well-behaved implementations to `registry`.
Status RegisterBumpOps(Registry& registry);

}  // namespace opsched::testing
