#!/usr/bin/env bash
# shellcheck disable=SC2317  # functions below run through check(), which shellcheck does not follow
# Checks the installed C package the way a consumer uses it: tools/install.sh into a
# temporary prefix (twice: the second run must leave the same tree), then the two example
# consumers built against that prefix and run on the CPU —
#   examples/consumer_cmake      find_package(opsched) and opsched::opsched
#   examples/consumer_pkgconfig  pkg-config --cflags --libs opsched
# One line per check; on a failure, the tail of its log. Exit 1 when any check fails.
#
#   tools/check_install.sh [BAZEL_FLAGS...]     (the flags go to tools/install.sh)
set -euo pipefail
cd "$(dirname "$0")/.."
for tool in cmake pkg-config make cc readelf; do
  command -v "$tool" >/dev/null || { echo "check_install: $tool is missing (tools/setup.sh installs it)" >&2; exit 1; }
done
work=$(mktemp -d "${TMPDIR:-/tmp}/opsched-check-install.XXXXXX")
trap 'rm -rf "$work"' EXIT
prefix=$work/prefix
version=$(tr -d '[:space:]' < VERSION)
failed=0

# Runs "$@" with its output in $work/NAME.log and prints one line: OK with the log's last
# line, or FAILED with the log's tail. (A function called here has no errexit: chain with &&.)
check() {
  local name=$1 what=$2
  shift 2
  if "$@" >"$work/$name.log" 2>&1; then
    echo "check_install: $what: OK ($(tail -n 1 "$work/$name.log"))"
  else
    echo "check_install: $what: FAILED"
    tail -n 40 "$work/$name.log" | sed 's/^/    /'
    failed=1
  fi
}

# The installed tree: types, modes, link targets and contents.
snapshot() {
  (cd "$prefix" && find . -printf '%y %m %p %l\n' | sort && find . -type f -exec sha256sum {} + | sort -k 2)
}
install_twice() {
  tools/install.sh "$prefix" "$@" && snapshot >"$work/first" &&
    tools/install.sh "$prefix" "$@" && snapshot >"$work/second" &&
    diff "$work/first" "$work/second" &&
    echo "$(grep -c '^[fl] ' "$work/first") files and links, the same after a second run"
}
check install "tools/install.sh into a temporary prefix" install_twice "$@"
[ "$failed" -eq 0 ] || exit 1
sed -n 's/^install: /  /p' "$work/install.log" | tail -n 2

# A binary must need the library by its SONAME and find it in the prefix.
# (ldd's output is taken whole first: `ldd | grep -q` under pipefail fails at random when
# grep exits on its match while ldd still writes, and ldd dies of SIGPIPE.)
links_installed_library() {
  local loads
  loads=$(ldd "$1") || { echo "ldd $1 failed"; return 1; }
  grep -q "libopsched\.so\.[0-9]* => $prefix/lib/libopsched\.so\.[0-9]" <<<"$loads" ||
    { echo "$1 does not load libopsched from $prefix/lib:"; echo "$loads"; return 1; }
}

# The CMake package's version file: this version or an older one of its major version.
cat >"$work/ask_version_file.cmake" <<'CMAKE'
set(PACKAGE_FIND_VERSION "${REQUEST}")
string(REGEX MATCH "^[0-9]+" PACKAGE_FIND_VERSION_MAJOR "${REQUEST}")
include("${FILE}")
message("${PACKAGE_VERSION_COMPATIBLE}")
CMAKE
version_file_answers() {
  local request=$1 want=$2 got
  got=$(cmake -DREQUEST="$request" -DFILE="$prefix/lib/cmake/opsched/opschedConfigVersion.cmake" \
    -P "$work/ask_version_file.cmake" 2>&1) || { echo "$got"; return 1; }
  [ "$got" = "$want" ] || { echo "a request for $request: compatible is '$got', not $want"; return 1; }
}
versions_agree() {
  local major=${version%%.*} minor_patch=${version#*.}
  local got
  got=$(PKG_CONFIG_PATH="$prefix/lib/pkgconfig" pkg-config --modversion opsched) &&
    { [ "$got" = "$version" ] || { echo "pkg-config says $got, VERSION says $version"; return 1; }; } &&
    version_file_answers "$version" TRUE && version_file_answers "$major.0" TRUE &&
    version_file_answers "$major.${minor_patch%%.*}.$(( ${version##*.} + 1 ))" FALSE &&
    version_file_answers "$(( major + 1 )).0" FALSE &&
    echo "pkg-config and CMake say $version"
}
check versions "the package's version" versions_agree

# One version everywhere: VERSION, the library's (core/version.h, `opsched --version`,
# every record's provenance) and the Python package's.
sources_agree() {
  local found
  found=$(sed -n 's/.*kVersion = "\(.*\)";/\1/p' core/version.h)
  [ "$found" = "$version" ] || { echo "core/version.h says '$found', VERSION says $version"; return 1; }
  found=$(sed -n 's/^version = "\(.*\)"/\1/p' python/pyproject.toml)
  [ "$found" = "$version" ] || { echo "python/pyproject.toml says '$found', VERSION says $version"; return 1; }
  found=$(sed -n 's/^__version__ = "\(.*\)"/\1/p' python/opsched/__init__.py)
  [ "$found" = "$version" ] || { echo "python/opsched/__init__.py says '$found', VERSION says $version"; return 1; }
  echo "VERSION, core/version.h and the Python package say $version"
}
check sources "one version in the sources" sources_agree

cmake_consumer() {
  cmake -S examples/consumer_cmake -B "$work/cmake" -DCMAKE_PREFIX_PATH="$prefix" &&
    cmake --build "$work/cmake" &&
    links_installed_library "$work/cmake/consumer_cmake" &&
    "$work/cmake/consumer_cmake"
}
check cmake "CMake consumer (examples/consumer_cmake)" cmake_consumer

pkgconfig_consumer() {
  mkdir -p "$work/pkgconfig" &&
    PKG_CONFIG_PATH="$prefix/lib/pkgconfig" make -C examples/consumer_pkgconfig OUT="$work/pkgconfig" &&
    links_installed_library "$work/pkgconfig/consumer_pkgconfig" &&
    "$work/pkgconfig/consumer_pkgconfig"
}
check pkgconfig "pkg-config consumer (examples/consumer_pkgconfig)" pkgconfig_consumer

exit "$failed"
