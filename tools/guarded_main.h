// The last line of defence of every command: opsched reports errors as Status values and
// checks sizes before it allocates, but an exception from a library (std::bad_alloc from
// a container, say) must still end in a clear message and an exit status, never in
// std::terminate and a core dump.
#pragma once

#include <functional>

namespace opsched::tools {

// Runs `body` and returns its exit status. An exception that escapes it is reported on
// stderr ("opsched: out of memory" for std::bad_alloc, "opsched: internal error: WHAT"
// for any other) and gives exit status 2, as docs/bench.md's table says.
int RunGuarded(const std::function<int()>& body);

}  // namespace opsched::tools
