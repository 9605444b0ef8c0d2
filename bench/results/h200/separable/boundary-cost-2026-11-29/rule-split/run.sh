#!/usr/bin/env bash
# Device call 10 (2026-11-29, fourteenth session): the rule written as two predicates
# (tensor_core_pays, tensor_core_rows_copied; same behaviour): the rule's tests, the entry's
# GPU test, and the separable and plan GPU tests, in 4 shards.
cd "$(dirname "$0")/../../../../../.."
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv > $OUT/device.txt; date -u >> $OUT/device.txt
export HALCONV_WISDOM=/nonexistent HALCONV_DATA_DIR=$PWD/data
F='SeparableTensorCoreRule*:CudaSeparableTensorCore*:*CudaSeparable*:PlanGpu*:*GaussianBlur*'
X=':-PlanGpuStreams.AutomaticBandsWhenTheDeviceIsFull:PlanGpuStreams.DeviceResidentImagesBeyondTheOneShotLimitRunInBands'
for s in 0 1 2 3; do GTEST_TOTAL_SHARDS=4 GTEST_SHARD_INDEX=$s timeout 250 .gpu/halconv_tests --gtest_brief=1 --gtest_filter="$F$X" > $OUT/shard$s.log 2>&1 & done; wait
date -u >> $OUT/device.txt
cd $OUT && tar czf ../r.tgz . && rm -rf ./* && mv ../r.tgz .
