// Registration of pointwise: `Register` adds the op definition, implementations and
// device verification this build compiled to a Registry. RegisterAll()
// (strategies/register_all.h) calls it. Nothing registers itself during static
// initialisation, so a static link needs no whole-archive flags.
#pragma once

#include "core/status.h"
#include "registry/registry.h"

namespace opsched::pointwise {

Status Register(Registry& registry);

// One per source file, defined next to what it adds (ops/pointwise/pointwise_<file>.cc);
// Register calls those this build compiled.
Status RegisterDef(Registry& registry);
Status RegisterCpu(Registry& registry);
Status RegisterCpuSpecialised(Registry& registry);
Status RegisterCpuBatchNorm(Registry& registry);
Status RegisterCudaImpls(Registry& registry);  // a CUDA build
Status RegisterDeviceVerification(Registry& registry);  // a CUDA build

}  // namespace opsched::pointwise
