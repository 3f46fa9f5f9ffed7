// RegisterAll: adds every op definition, implementation, device verification and
// strategy this build compiled (CUDA, cuBLAS and cuDNN ones only where built) to a
// Registry. Registration is explicit: nothing registers itself during static
// initialisation, so a program links opsched statically or as a shared library, inside
// Bazel or not, without whole-archive flags. A Runtime created without a registry of its
// own calls RegisterAll() itself; the command-line tool and the tests' main call it first.
#pragma once

#include "core/status.h"
#include "registry/registry.h"

namespace opsched {

// Adds everything to `registry`; an error if a name is there already.
Status RegisterAll(Registry& registry);

// Fills Registry::Global() the first time it is called in a process; later calls (from
// any thread) return that first outcome.
Status RegisterAll();

}  // namespace opsched
