// Writing a file so that it is either wholly replaced or untouched: the bytes go to a
// temporary file beside it (`PATH.tmp.<pid>`), are flushed to disk, and the temporary
// file is renamed over PATH (then the directory is flushed). A reader sees the old file
// or the new one, never a mix; a full disk, a write error or a crash before the rename
// leaves PATH as it was, and on an error the temporary file is removed.
#pragma once

#include <string>
#include <string_view>

#include "core/status.h"

namespace opsched {

// The temporary file WriteFileAtomically uses for `path` in this process.
std::string TemporaryPathFor(const std::string& path);

// Replaces `path` with `bytes` (see above). A replaced file's permission bits are kept;
// a new file gets 0644 less the umask.
Status WriteFileAtomically(const std::string& path, std::string_view bytes);

}  // namespace opsched
