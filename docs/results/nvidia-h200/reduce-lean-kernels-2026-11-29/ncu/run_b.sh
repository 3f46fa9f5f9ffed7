#!/usr/bin/env bash
set -u
cd "$(dirname "$0")/../.."
S="--section SpeedOfLight --section Occupancy --section WarpStateStats --section SchedulerStats --section InstructionStats --section LaunchStats --section MemoryWorkloadAnalysis"
ncu --kernel-name RowsKernel --launch-skip 10 --launch-count 1 $S .out/mb/mbA opsched > $OUT/ncu_A_rows16.txt 2>&1
ncu --kernel-name Rows --launch-skip 10 --launch-count 1 $S .out/mb/mb > $OUT/ncu_mine_rows16.txt 2>&1
ncu --kernel-name RowsBlock --launch-skip 150 --launch-count 1 $S .out/mb/mb > $OUT/ncu_mine_block128u4.txt 2>&1
