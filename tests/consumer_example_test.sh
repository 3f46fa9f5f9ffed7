#!/usr/bin/env bash
# Runs the consumer guide's example and checks that the guide shows it verbatim.
set -euo pipefail
bin="$1"; guide="$2"; source="$3"
out=$("$bin")
echo "$out"
grep -q "max |out - expected|" <<<"$out"
grep -q "implementation: scatter_" <<<"$out"
python3 - "$guide" "$source" <<'PY'
import sys
guide, source = open(sys.argv[1]).read(), open(sys.argv[2]).read()
marker = "<!-- example: docs/examples/consumer.cc -->"
assert marker in guide, "the guide lost its example marker"
block = guide.split(marker, 1)[1].split("```cpp\n", 1)[1].split("```", 1)[0]
assert block == source, "docs/consumer-guide.md's example differs from docs/examples/consumer.cc"
print("the guide's example is docs/examples/consumer.cc verbatim")
PY
