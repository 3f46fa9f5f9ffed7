#!/usr/bin/env bash
set -uo pipefail
H=.out/h121; tar xJf $H/bundle.tar.xz -C .
export OPSCHED_LIBRARY=$PWD/.bundle/bin/libopsched.so LD_LIBRARY_PATH=$PWD/.bundle/lib:/usr/local/cuda/lib64
which nsys ncu 2>&1 | head -2
timeout 300 python3 $H/diag.py   # docs: diag.py.txt 2>&1 | tee $OUT/diag.txt | grep -v "^\[W"
