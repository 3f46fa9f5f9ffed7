#!/usr/bin/env python3
"""Copies libopsched.so into the package (python/opsched/) so that `pip install ./python`
installs it with the Python files.

    python3 python/copy_library.py [PATH]   # default: bazel-bin/opsched/libopsched.so
"""

import pathlib
import shutil
import sys

here = pathlib.Path(__file__).resolve().parent
source = pathlib.Path(sys.argv[1]) if len(sys.argv) > 1 else here.parent / "bazel-bin" / "opsched" / "libopsched.so"
if not source.is_file():
    sys.exit(f"copy_library: no {source}; build it first: bazel build //opsched:libopsched.so")
target = here / "opsched" / "libopsched.so"
target.unlink(missing_ok=True)  # Bazel's outputs are read-only; replace, never write through
shutil.copyfile(source, target)
print(f"copy_library: {source} -> {target}")
