#!/bin/sh
echo "opsched: bazel coverage needs remote_coverage_tools, which this offline build does not ship" >&2
exit 1
