#!/usr/bin/env bash
# Runs the consumer guide's example, checks that the guide shows it verbatim and that the
# quick start's suite tunes every workload the example explains (so that after
# ./quickstart.sh the example is served from records).
set -euo pipefail
bin="$1"; guide="$2"; source="$3"; suite="$4"
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
python3 - "$source" "$suite" <<'PY'
import re, sys
source, suite = open(sys.argv[1]).read(), open(sys.argv[2]).read()
# Every workload line the example explains (string literals inside Explain(...) calls).
explained = ["".join(re.findall(r'"([^"]*)"', call)) for call in re.findall(r'Explain\(\s*((?:"[^"]*"\s*)+)\)', source)]
assert explained, "the example explains no workload any more: update this test"
lines = {line.split("#", 1)[0].strip() for line in suite.splitlines()}
missing = [w for w in explained if w not in lines]
assert not missing, f"bench/suites/quickstart.txt lacks the example's workloads: {missing}"
print(f"the quick-start suite tunes the example's {len(explained)} workload(s)")
PY
