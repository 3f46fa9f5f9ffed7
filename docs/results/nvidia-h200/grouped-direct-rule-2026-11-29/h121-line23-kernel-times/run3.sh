#!/usr/bin/env bash
set -uo pipefail
H=.out/h121; tar xJf $H/bundle.tar.xz -C .
export OPSCHED_LIBRARY=$PWD/.bundle/bin/libopsched.so LD_LIBRARY_PATH=$PWD/.bundle/lib:/usr/local/cuda/lib64
timeout 100 python3 $H/diag3.py 2>&1 | tee $OUT/diag3.txt
