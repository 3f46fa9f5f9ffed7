#!/usr/bin/env bash
# Builds optimised opsched binaries (the CLI, every test and benchmark) and copies them,
# with the shared libraries they need that a GPU host may lack, into one folder:
#
#   tools/bundle.sh [OUT]        (default .bundle)
#
# OUT/bin       opsched, the test and benchmark binaries
# OUT/lib       non-system shared libraries (protobuf, abseil, XGBoost, fmt, spdlog, ...)
# OUT/run       runs a bundled binary with OUT/lib on the library path
# OUT/run_tests runs every bundled test (GPU tests run for real where a GPU is present)
# OUT/python    the Python package (python/), using OUT/lib/libopsched.so (the C API)
# OUT/run_python_tests  runs its tests (numpy; torch and CUDA where present)
# OUT.tgz       the same folder compressed (a third of the size, for copying to a GPU host)
#
# The GPU host needs only the NVIDIA driver, the CUDA runtime libraries, cuBLAS and
# cuDNN (cudart itself is linked statically). See docs/bundle.md.
set -euo pipefail
cd "$(dirname "$0")/.."
out="${1:-.bundle}"

tests=$(bazel query 'kind(cc_test, //tests/...)' 2>/dev/null)
benches=$(bazel query 'kind(cc_binary, //bench/...)' 2>/dev/null)
# shellcheck disable=SC2086
bazel build //tools:opsched //opsched:libopsched.so $tests $benches

rm -rf "$out"
mkdir -p "$out/bin" "$out/lib"
bindir=$(bazel info bazel-bin 2>/dev/null)
for label in //tools:opsched $tests $benches; do
  path="${label#//}"
  cp "$bindir/${path/://}" "$out/bin/"
  strip --strip-unneeded "$out/bin/$(basename "${path/://}")"
done

cp "$bindir/opsched/libopsched.so" "$out/lib/"
strip --strip-unneeded "$out/lib/libopsched.so"
cp -r python "$out/python"
rm -rf "$out"/python/opsched/__pycache__ "$out"/python/tests/__pycache__

# Libraries the host provides: the C runtime, the GPU driver and the vendor libraries.
system='^(linux-vdso|ld-linux|libc\.|libm\.|libdl\.|librt\.|libpthread\.|libstdc\+\+|libgcc_s|libcuda\.|libcudnn|libcublas|libnvidia)'
for bin in "$out"/bin/* "$out/lib/libopsched.so"; do
  ldd "$bin" | awk '/=> \//{print $1" "$3}' | while read -r name file; do
    if ! [[ "$name" =~ $system ]] && [ ! -e "$out/lib/$name" ]; then
      cp -L "$file" "$out/lib/$name"
    fi
  done
done

# Open MPI (when installed), relocatable with OPAL_PREFIX, so that `OUT/mpirun -np N
# OUT/bin/opsched tune --mpi ...` works on a host without it: mpirun (orterun), its
# plugins, help texts and defaults under OUT/mpi in Debian's layout, PMIx's plugins
# under OUT/pmix, their libraries in OUT/lib.
mpi_libdir=/usr/lib/x86_64-linux-gnu/openmpi/lib
pmix_dir=/usr/lib/x86_64-linux-gnu/pmix2
if [ -x /usr/bin/orterun ] && [ -d "$mpi_libdir/openmpi3" ]; then
  mkdir -p "$out/mpi/bin" "$out/mpi/lib/x86_64-linux-gnu/openmpi/lib" "$out/mpi/share" "$out/mpi/etc" "$out/pmix/lib"
  cp /usr/bin/orterun "$out/mpi/bin/orterun"
  cp -r "$mpi_libdir/openmpi3" "$out/mpi/lib/x86_64-linux-gnu/openmpi/lib/"
  cp -r /usr/share/openmpi "$out/mpi/share/"
  cp -r /etc/openmpi "$out/mpi/etc/"
  [ -d "$pmix_dir/lib/pmix" ] && cp -r "$pmix_dir/lib/pmix" "$out/pmix/lib/"
  [ -d "$pmix_dir/share" ] && cp -r "$pmix_dir/share" "$out/pmix/"
  for f in "$out/mpi/bin/orterun" "$out"/mpi/lib/x86_64-linux-gnu/openmpi/lib/openmpi3/*.so "$out"/pmix/lib/pmix/*.so; do
    ldd "$f" 2>/dev/null | awk '/=> \//{print $1" "$3}' | while read -r name file; do
      if ! [[ "$name" =~ $system ]] && [ ! -e "$out/lib/$name" ]; then cp -L "$file" "$out/lib/$name"; fi
    done
  done
  cat > "$out/mpirun" <<'RUN'
#!/usr/bin/env bash
# The bundle's Open MPI mpirun: mpirun ARGS... (e.g. -np 3 OUT/bin/opsched tune --mpi ...).
here="$(cd "$(dirname "$0")" && pwd)"
export OPAL_PREFIX="$here/mpi"
export PMIX_MCA_mca_base_component_path="$here/pmix/lib/pmix"
export LD_LIBRARY_PATH="$here/lib:/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}"
exec "$here/mpi/bin/orterun" "$@"
RUN
  chmod +x "$out/mpirun"
fi

cat > "$out/run" <<'RUN'
#!/usr/bin/env bash
# Runs a bundled binary: run BINARY [ARGS...]
here="$(cd "$(dirname "$0")" && pwd)"
export LD_LIBRARY_PATH="$here/lib:/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}"
bin="$1"; shift
exec "$here/bin/$bin" "$@"
RUN
cat > "$out/run_tests" <<'RUN'
#!/usr/bin/env bash
# Runs every bundled test; extra arguments go to each (e.g. --gtest_filter=*cuda*).
# Exit status 1 when any test fails. Set SKIP="name ..." to leave tests out.
here="$(cd "$(dirname "$0")" && pwd)"
export LD_LIBRARY_PATH="$here/lib:/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}"
export TEST_TMPDIR="${TEST_TMPDIR:-$(mktemp -d)}"
# Tests that read Bazel runfiles (cli_test runs the CLI, bench_test reads docs/, others
# read bench/suites/) find them in a tree laid out like Bazel's when the bundle sits in a
# checkout: TEST_SRCDIR/opsched is the checkout, with tools/opsched the bundled CLI.
if [ -z "${TEST_SRCDIR:-}" ] && [ -d "$here/../docs" ] && [ -d "$here/../tools" ]; then
  export TEST_SRCDIR="$TEST_TMPDIR/runfiles"
  mkdir -p "$TEST_SRCDIR/opsched/tools"
  for entry in "$here"/../*; do
    [ "$(basename "$entry")" = tools ] || ln -sfn "$(realpath "$entry")" "$TEST_SRCDIR/opsched/$(basename "$entry")"
  done
  for entry in "$here"/../tools/*; do ln -sfn "$(realpath "$entry")" "$TEST_SRCDIR/opsched/tools/"; done
  ln -sfn "$here/bin/opsched" "$TEST_SRCDIR/opsched/tools/opsched"
fi
failed=0
for t in "$here"/bin/*_test; do
  name=$(basename "$t")
  if [[ " ${SKIP:-} " == *" $name "* ]]; then echo "== $name: skipped (SKIP)"; continue; fi
  echo "== $name"
  # A fuzz target's corpus test takes its corpus from the checkout (Bazel passes it as an
  # argument), and no gtest flags.
  args=("$@")
  if [[ "$name" == *_fuzzer_corpus_test ]]; then
    corpus="$here/../tests/fuzz/corpus/${name%_fuzzer_corpus_test}"
    if [ ! -d "$corpus" ]; then echo "== $name: skipped (no corpus at $corpus: the bundle is not in a checkout)"; continue; fi
    args=("$corpus")
  fi
  if "$t" "${args[@]}"; then echo "== $name: PASSED"; else echo "== $name: FAILED"; failed=1; fi
done
exit $failed
RUN
cat > "$out/run_python_tests" <<'RUN'
#!/usr/bin/env bash
# Runs the Python package's tests over the bundled libopsched.so: numpy on the CPU, and
# torch tensors on the GPU where torch and a GPU are present (else they skip, saying why).
here="$(cd "$(dirname "$0")" && pwd)"
export LD_LIBRARY_PATH="$here/lib:/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}"
exec "$here/python/run_tests.sh" "$here/lib/libopsched.so" "$@"
RUN
chmod +x "$out/run" "$out/run_tests" "$out/run_python_tests"
echo "bundle in $out: $(ls "$out/bin" | wc -l) binaries, $(ls "$out/lib" | wc -l) libraries, $(du -sh "$out" | cut -f1)"
tar czf "$out.tgz" "$out"
echo "compressed: $out.tgz, $(du -sh "$out.tgz" | cut -f1)"
