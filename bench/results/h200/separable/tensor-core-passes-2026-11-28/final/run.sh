#!/usr/bin/env bash
# Final call (2026-11-28): the whole test suite in 8 shards with the tensor-core separable
# variant, then the separable and pipelines reports with the committed rule.
cd "$(dirname "$0")/.."
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv > $OUT/device.txt; date -u >> $OUT/device.txt
export HALCONV_WISDOM=/nonexistent HALCONV_CLI=$PWD/.gpu/halconv HALCONV_DATA_DIR=$PWD/data
timeout 60 .gpu/halconv_bench --report separable --sizes 1024,2048,4096,8192,3840x2160 --kernels 15,31,47,63,79,95,111,127 > $OUT/separable.log 2>&1
timeout 60 .gpu/halconv_bench --report pipelines --sizes 1024,4096,8192,3840x2160 > $OUT/pipelines.log 2>&1
date -u >> $OUT/device.txt
X='PlanGpuStreams.AutomaticBandsWhenTheDeviceIsFull:PlanGpuStreams.DeviceResidentImagesBeyondTheOneShotLimitRunInBands'
for s in 0 1 2 3 4 5 6 7; do GTEST_TOTAL_SHARDS=8 GTEST_SHARD_INDEX=$s timeout 330 .gpu/halconv_tests --gtest_brief=1 --gtest_filter="-$X" > $OUT/shard$s.log 2>&1 & done; wait
date -u >> $OUT/device.txt
timeout 60 .gpu/halconv_tests --gtest_brief=1 --gtest_filter="$X" > $OUT/alone.log 2>&1
date -u >> $OUT/device.txt
grep -hE "^\[  PASSED|^\[  FAILED  \] [0-9]|^\[  SKIPPED \] [0-9]|tests ran" $OUT/shard*.log $OUT/alone.log
grep -h "^\[  FAILED  \] [A-Z]" $OUT/shard*.log $OUT/alone.log | sort -u | head -20
cd $OUT && tar czf ../r.tgz . && rm -rf ./* && mv ../r.tgz .
