// Registration of conv2d, conv2d_bias_act and conv2d_backward: `Register` adds their op
// definitions, implementations and device verification this build compiled to a
// Registry. RegisterAll() (strategies/register_all.h) calls it. Nothing registers itself
// during static initialisation, so a static link needs no whole-archive flags.
#pragma once

#include "core/status.h"
#include "registry/registry.h"

namespace opsched::conv2d {

Status Register(Registry& registry);

// One per source file, defined next to what it adds (ops/conv2d/conv2d_<file>.cc);
// Register calls those this build compiled.
Status RegisterDef(Registry& registry);
Status RegisterCpu(Registry& registry);
Status RegisterCpuGemm(Registry& registry);
Status RegisterCudaDepthwiseImpls(Registry& registry);  // a CUDA build
Status RegisterDeviceVerification(Registry& registry);  // a CUDA build
Status RegisterCudaImpls(Registry& registry);  // a build with cuBLAS
Status RegisterCudnn(Registry& registry);  // a build with cuDNN
Status RegisterCudnnBackward(Registry& registry);  // a build with cuDNN
Status RegisterCudnnGraphImpls(Registry& registry);  // a build with cuDNN

}  // namespace opsched::conv2d
