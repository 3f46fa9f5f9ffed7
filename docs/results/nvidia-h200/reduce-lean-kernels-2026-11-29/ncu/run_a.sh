#!/usr/bin/env bash
# ncu: opsched's RowsKernel (group 256) against the microbenchmark's RowsBlock (block 256, 2 loads a thread).
set -u
cd "$(dirname "$0")/../.."
S="--section SpeedOfLight --section Occupancy --section LaunchStats --section MemoryWorkloadAnalysis --section WarpStateStats"
ncu --kernel-name regex:RowsKernel --launch-skip 205 --launch-count 1 $S .out/mb/mb > $OUT/ncu_opsched_rows256.txt 2>&1
ncu --kernel-name regex:RowsBlock --launch-skip 75 --launch-count 1 $S .out/mb/mb > $OUT/ncu_mine_rows256.txt 2>&1
ncu --kernel-name regex:RowsKernel --launch-skip 10 --launch-count 1 $S .out/mb/mb > $OUT/ncu_opsched_rows16.txt 2>&1
ncu --kernel-name regex:ColumnsKernel --launch-skip 10 --launch-count 1 $S .out/mb/mb > $OUT/ncu_opsched_cols.txt 2>&1
ncu --kernel-name regex:Finish --launch-skip 10 --launch-count 1 $S .out/mb/mb > $OUT/ncu_mine_finish.txt 2>&1
ncu --kernel-name regex:FinishBlocks --launch-skip 10 --launch-count 1 $S .out/mb/mb > $OUT/ncu_opsched_finish.txt 2>&1
ls -la $OUT
