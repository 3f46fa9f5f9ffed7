#!/usr/bin/env bash
# Bazel's workspace status command (.bazelrc: --workspace_status_command): the git commit
# that `opsched --version` prints (tools:build_stamp reads it from stable-status.txt).
# Outside a git checkout, or without git, the commit is "unknown"; this never fails a build.
commit=$(git rev-parse --short=12 HEAD 2>/dev/null) || commit=unknown
if [ "$commit" != unknown ] && ! git diff --quiet HEAD -- 2>/dev/null; then commit="$commit-dirty"; fi
echo "STABLE_GIT_COMMIT $commit"
exit 0
