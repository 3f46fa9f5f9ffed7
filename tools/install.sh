#!/usr/bin/env bash
# Builds libopsched.so and installs opsched's C package into PREFIX:
#
#   PREFIX/include/opsched/c_api.h         the stable C API
#   PREFIX/lib/libopsched.so.1             the library, named by its SONAME
#   PREFIX/lib/libopsched.so               -> libopsched.so.1 (what -lopsched finds)
#   PREFIX/lib/pkgconfig/opsched.pc        pkg-config --cflags --libs opsched
#   PREFIX/lib/cmake/opsched/              find_package(opsched) and opsched::opsched
#
#   tools/install.sh PREFIX [BAZEL_FLAGS...]
#
# The build is the normal one (GPU code when the CUDA toolkit is present);
# OPSCHED_DISABLE_CUDA=1 and OPSCHED_DISABLE_HIP=1 work as for every build (docs/build.md).
# The version is the repository's VERSION file. Running it again gives the same tree;
# files are replaced by rename, never written through, so a process using the old
# library keeps its copy. The library needs the system libraries it was built against
# at run time (the list is printed at the end).
set -euo pipefail

fail() { echo "install: $*" >&2; exit 1; }

if [ $# -lt 1 ] || [ -z "$1" ] || [[ "$1" == -* ]]; then
  echo "usage: tools/install.sh PREFIX [BAZEL_FLAGS...]   (e.g. tools/install.sh \$HOME/.local)" >&2
  exit 2
fi
prefix=$(realpath -m -- "$1")
shift
# pkg-config cannot quote a path with spaces, and these characters are syntax in a .pc
# file. Checked on the absolute path (a relative PREFIX takes on the current folder's).
case "$prefix" in
  *[[:space:]\$\"\'\\\#\`]*) fail "PREFIX '$prefix' has a space or one of \$ \" ' \\ # \` in it, which opsched.pc cannot hold; choose another PREFIX" ;;
esac

# Every directory we write must exist or be creatable and take a file; found before the
# build, not after it.
for d in "$prefix/include/opsched" "$prefix/lib/pkgconfig" "$prefix/lib/cmake/opsched"; do
  mkdir -p -- "$d" 2>/dev/null || fail "cannot create $d (is $prefix writable by $(id -un)? choose another PREFIX)"
  probe=$(mktemp "$d/.install-probe.XXXXXX" 2>/dev/null) ||
    fail "cannot write into $d (is $prefix writable by $(id -un)? choose another PREFIX)"
  rm -f -- "$probe"
done

cd "$(dirname "$0")/.."
version=$(tr -d '[:space:]' < VERSION)
[[ "$version" =~ ^([0-9]+)\.[0-9]+\.[0-9]+$ ]] || fail "VERSION holds '$version', not MAJOR.MINOR.PATCH"
version_major=${BASH_REMATCH[1]}

bazel build "$@" //opsched:libopsched.so
library="$(bazel info "$@" bazel-bin)/opsched/libopsched.so"
[ -f "$library" ] || fail "bazel built no $library"
soname=$(readelf -d "$library" | sed -n 's/.*(SONAME).*\[\(.*\)\]$/\1/p')
[[ "$soname" == libopsched.so.* ]] ||
  fail "$library has SONAME '$soname', not libopsched.so.N (opsched/BUILD's linkopts set it)"

# Copies $1 to $2 with mode $3 by way of a temporary file in the same directory.
put() {
  local tmp
  tmp=$(mktemp "$2.XXXXXX")
  cp -- "$1" "$tmp"
  chmod "$3" "$tmp"
  mv -f -- "$tmp" "$2"
}
# Writes template $1 to $2 with the @NAME@ placeholders filled in.
render() {
  local tmp
  tmp=$(mktemp "$2.XXXXXX")
  # shellcheck disable=SC2001  # bash 5.2's ${x//...} gives & a meaning in the replacement
  sed -e "s|@PREFIX@|$(sed 's/[|&]/\\&/g' <<<"$prefix")|g" \
      -e "s|@VERSION@|$version|g" -e "s|@VERSION_MAJOR@|$version_major|g" \
      -e "s|@SONAME@|$soname|g" "$1" > "$tmp"
  if grep -n '@[A-Z_]*@' "$tmp" >&2; then rm -f "$tmp"; fail "$1 has a placeholder install.sh does not fill"; fi
  chmod 0644 "$tmp"
  mv -f -- "$tmp" "$2"
}

put opsched/c_api.h "$prefix/include/opsched/c_api.h" 0644
put "$library" "$prefix/lib/$soname" 0755
# The development link, replaced by rename like the files.
ln -sfn "$soname" "$prefix/lib/.libopsched.so.$$"
mv -Tf -- "$prefix/lib/.libopsched.so.$$" "$prefix/lib/libopsched.so"
render tools/install/opsched.pc.in "$prefix/lib/pkgconfig/opsched.pc"
render tools/install/opschedConfig.cmake.in "$prefix/lib/cmake/opsched/opschedConfig.cmake"
render tools/install/opschedConfigVersion.cmake.in "$prefix/lib/cmake/opsched/opschedConfigVersion.cmake"

# What the library loads at run time (abseil as one entry: it is some 30 libraries).
needed=$(readelf -d "$library" | sed -n 's/.*(NEEDED).*\[\(.*\)\]$/\1/p' |
  sed 's/^libabsl_.*\.so\.\(.*\)$/libabsl_*.so.\1/' | sort -u | tr '\n' ' ')
echo "install: opsched $version ($soname) installed into $prefix"
echo "install: at run time it loads ${needed% }"
