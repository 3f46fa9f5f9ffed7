// The kernel of the read flush (core/l2_flush.h): reads a device buffer from end to end
// and leaves it unchanged. Built by nvcc or hipcc (l2_flush_kernels.cu); without GPU
// support it says so (l2_flush_none.cc).
#pragma once

#include <cstddef>

#include "core/status.h"

namespace opsched::gpu {

// Queues on `stream` a kernel that loads every 16-byte word of `buffer` (`bytes` rounded
// down to a multiple of 16; `buffer` 16-byte aligned) through L2.
Status ReadBufferAsync(const void* buffer, size_t bytes, void* stream);

}  // namespace opsched::gpu
