#!/usr/bin/env python3
"""Checks that dependencies between the top-level folders point one way, and that the
consumer header (opsched/opsched.h) pulls in no internals.

Each folder may include headers only from the folders listed for it below (the layers of
docs/ARCHITECTURE.md, "Layers"). An include of any other project folder is an error, so
is a folder missing from the table. The project headers opsched/opsched.h includes,
directly or not, must not include generated protobuf headers, absl hash containers,
records/, selector/ or the dispatcher. Run by test.sh; exits 1 naming each offence.
"""
import os
import re
import sys

# Lowest layer first; a folder may use only those listed for it.
ALLOWED = {
    "core": set(),
    "registry": {"core"},
    "extern": {"core", "registry"},
    "ops": {"core", "registry", "extern"},
    "records": {"core"},
    "selector": {"core", "registry", "records"},
    "strategies": {"core", "registry", "extern", "ops", "records", "selector"},
    "tuner": {"core", "registry", "records", "selector", "strategies"},
    "opsched": {"core", "registry", "records", "selector", "strategies"},
    "bench": {"core", "registry", "extern", "ops", "records", "selector", "strategies", "tuner", "opsched"},
    "tools": {"core", "registry", "records", "selector", "strategies", "tuner", "opsched", "bench"},
    "tests": {"core", "registry", "extern", "ops", "records", "selector", "strategies", "tuner", "opsched",
              "bench", "tools"},
    "docs": {"opsched"},
    "examples": set(),
    "python": set(),
}
SKIP = {"third_party", "bazel", ".git", ".bundle", ".fuzz", ".out"}
SOURCE = re.compile(r"\.(h|cc|cu|cuh|c|cpp)$")
INCLUDE = re.compile(r'^\s*#\s*include\s+"([^/"]+)/')
ANY_INCLUDE = re.compile(r'^\s*#\s*include\s+["<]([^">]+)[">]')
CONSUMER_HEADER = "opsched/opsched.h"
# What the consumer header must not reach: (pattern, why).
FORBIDDEN = [
    (re.compile(r"\.pb\.h$"), "a generated protobuf header"),
    (re.compile(r"^absl/container/(flat|node)_hash"), "an absl hash container"),
    (re.compile(r"^records/"), "the records database"),
    (re.compile(r"^selector/"), "the learned selector"),
    (re.compile(r"^strategies/dispatcher\.h$"), "the dispatcher"),
]


def consumer_header_errors(root):
    """Walks the project headers reachable from the consumer header."""
    errors, seen, todo = [], set(), [(CONSUMER_HEADER, CONSUMER_HEADER)]
    while todo:
        header, via = todo.pop()
        if header in seen:
            continue
        seen.add(header)
        with open(os.path.join(root, header), errors="replace") as f:
            for line in f:
                m = ANY_INCLUDE.match(line)
                if not m:
                    continue
                name = m.group(1)
                for pattern, why in FORBIDDEN:
                    if pattern.search(name):
                        errors.append(f"{CONSUMER_HEADER} reaches {why}: {header} includes {name} (via {via})")
                if os.path.isfile(os.path.join(root, name)):
                    todo.append((name, f"{via} -> {name}"))
    return errors, len(seen)


def main(root):
    folders = {d for d in os.listdir(root) if os.path.isdir(os.path.join(root, d)) and not d.startswith("bazel-")}
    errors = []
    for top in sorted(folders - SKIP):
        for dirpath, _, files in os.walk(os.path.join(root, top)):
            for name in files:
                if not SOURCE.search(name):
                    continue
                path = os.path.join(dirpath, name)
                with open(path, errors="replace") as f:
                    for number, line in enumerate(f, 1):
                        m = INCLUDE.match(line)
                        if not m or m.group(1) == top or m.group(1) not in folders:
                            continue
                        if top not in ALLOWED:
                            errors.append(f"{path}: folder '{top}' is not in tools/check_layers.py's table")
                            break
                        if m.group(1) not in ALLOWED[top]:
                            errors.append(f"{os.path.relpath(path, root)}:{number}: {top}/ may not include "
                                          f"{m.group(1)}/ ({line.strip()})")
    consumer, headers = consumer_header_errors(root)
    errors += consumer
    for e in errors:
        print(e)
    if errors:
        print(f"check_layers: {len(errors)} include(s) against the layering or the consumer header")
        return 1
    print(f"check_layers: {len(folders - SKIP)} folders, dependencies point one way; "
          f"{CONSUMER_HEADER} reaches {headers} project headers, none internal")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(__file__), "..")))
