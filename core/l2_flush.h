// How a GPU measurement empties L2 before each timed repetition, so that every
// repetition finds its inputs in device memory, as the first call of a layer does:
//   read       a kernel reads a buffer twice the L2 size: L2 holds clean lines of that
//              buffer, and what the previous repetition left dirty is written back
//              during the flush, before the timed region (the default);
//   overwrite  a memset of that buffer: L2 is left full of the flush's dirty lines, whose
//              write-back then lands in the timed region (5-10 us on ops that move tens
//              of megabytes: docs/results/nvidia-h100/l2-flush-2026-11-28/); what
//              opsched measured with before the read flush, and what records without
//              StatsProto.l2_flush were measured with;
//   none       no flush (inputs may still be in L2 from the previous repetition).
#pragma once

#include <string_view>

#include "core/status.h"

namespace opsched {

enum class L2Flush { kRead, kOverwrite, kNone };

// "read", "overwrite", "none".
std::string_view L2FlushName(L2Flush flush);
// The inverse of L2FlushName; an InvalidArgument error names the three.
StatusOr<L2Flush> ParseL2Flush(std::string_view name);

}  // namespace opsched
