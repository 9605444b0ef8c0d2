#!/usr/bin/env bash
# The whole test suite in 8 parallel shards (the two memory-hungry band tests alone after).
cd "$(dirname "$0")/.."
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv > $OUT/device.txt; date -u >> $OUT/device.txt
export HALCONV_WISDOM=/nonexistent HALCONV_CLI=$PWD/.gpu/halconv HALCONV_DATA_DIR=$PWD/data
X='PlanGpuStreams.AutomaticBandsWhenTheDeviceIsFull:PlanGpuStreams.DeviceResidentImagesBeyondTheOneShotLimitRunInBands'
for s in 0 1 2 3 4 5 6 7; do GTEST_TOTAL_SHARDS=8 GTEST_SHARD_INDEX=$s timeout 420 .gpu/halconv_tests --gtest_filter="-$X" > $OUT/shard$s.log 2>&1 & done; wait
date -u >> $OUT/device.txt
timeout 100 .gpu/halconv_tests --gtest_filter="$X" > $OUT/alone.log 2>&1
date -u >> $OUT/device.txt
grep -hE "^\[  PASSED|^\[  FAILED  \] [0-9]|^\[  SKIPPED \] [0-9]|tests ran" $OUT/shard*.log $OUT/alone.log
grep -h "^\[  FAILED  \] [A-Z]" $OUT/shard*.log $OUT/alone.log | sort -u | head -20
cd $OUT && tar czf ../r.tgz . && rm -rf ./* && mv ../r.tgz .
