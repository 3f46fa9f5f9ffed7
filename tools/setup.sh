#!/usr/bin/env bash
# Installs the Debian 12 packages opsched builds with, when missing (idempotent: a no-op
# when all are there). Needs root or sudo. The CUDA toolkit is not a Debian package: the
# build uses /usr/local/cuda when present and is CPU-only otherwise.
set -euo pipefail

packages=(
  bazel-bootstrap          # Bazel 4.2.3 (the build runs offline: see docs/build.md)
  g++ python3 git
  libabsl-dev libprotobuf-dev protobuf-compiler zlib1g-dev
  libfmt-dev libspdlog-dev libcli11-dev
  libgtest-dev libgmock-dev libbenchmark-dev
  libxgboost-dev           # the tuner's cost model
  gnuplot-nox              # charts of opsched bench
  clang-14 libclang-rt-14-dev libomp-14-dev  # libFuzzer targets (tests/fuzz, tools/fuzz.sh)
  make
  cmake pkg-config                     # the installed package's consumers (tools/check_install.sh)
  hipcc libamdhip64-dev librocprim-dev  # HIP compile check of the GPU kernels
  libopenmpi-dev openmpi-bin           # tuning over several hosts (opsched tune --mpi)
  python3-numpy python3-pip            # the Python package's tests (//python:python_test)
)

# The Python package's tests need numpy in whichever python3 is first on PATH: Debian's
# has python3-numpy; another interpreter (pyenv, a venv) gets it from pip.
ensure_numpy() {
  python3 -c 'import numpy' 2>/dev/null && return 0
  echo "setup: installing numpy for $(command -v python3) with pip"
  python3 -m pip install --quiet --user --break-system-packages numpy 2>/dev/null ||
    python3 -m pip install --quiet numpy
}

missing=()
for p in "${packages[@]}"; do
  [ "$(dpkg-query -W -f='${Status}' "$p" 2>/dev/null)" = "install ok installed" ] || missing+=("$p")
done
if [ ${#missing[@]} -eq 0 ]; then
  echo "setup: all ${#packages[@]} packages present"
  ensure_numpy
  exit 0
fi
sudo=""
if [ "$(id -u)" -ne 0 ]; then
  command -v sudo >/dev/null || { echo "setup: need root (or sudo) to install: ${missing[*]}" >&2; exit 1; }
  sudo="sudo"
fi
echo "setup: installing ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
$sudo apt-get update -qq
$sudo apt-get install -y -qq --no-install-recommends "${missing[@]}"
ensure_numpy
