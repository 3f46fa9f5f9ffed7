// Registration of reduce: `Register` adds the op definition, implementations and
// device verification this build compiled to a Registry. RegisterAll()
// (strategies/register_all.h) calls it. Nothing registers itself during static
// initialisation, so a static link needs no whole-archive flags.
#pragma once

#include "core/status.h"
#include "registry/registry.h"

namespace opsched::reduce {

Status Register(Registry& registry);

// One per source file, defined next to what it adds (ops/reduce/reduce_<file>.cc);
// Register calls those this build compiled.
Status RegisterDef(Registry& registry);
Status RegisterCpu(Registry& registry);
Status RegisterCudaImpls(Registry& registry);  // a CUDA build
Status RegisterDeviceVerification(Registry& registry);  // a CUDA build
Status RegisterCudnn(Registry& registry);  // a build with cuDNN

}  // namespace opsched::reduce
