// What this opsched binary was built from and with, for `opsched --version`.
#pragma once

#include <string>

namespace opsched::tools {

// "opsched 0.1.0", "git commit 95a9bb0d5a2e" ("unknown" outside a git checkout, "-dirty"
// with uncommitted changes), and the CUDA, cuDNN and cuBLAS versions of the headers it
// was compiled against ("none" for a library it was built without), one per line.
std::string VersionText();

}  // namespace opsched::tools
