#!/usr/bin/env bash
# Device call 3 (2026-11-29, fourteenth session): the rule at 66 taps together (this
# change) through the whole suite in 8 shards and the two memory-hungry PlanGpuStreams tests
# alone, then the separable report at K = 31-35, where the entry now takes the passes from 33.
cd "$(dirname "$0")/../../../../../.."
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv > $OUT/device.txt; date -u >> $OUT/device.txt
export HALCONV_WISDOM=/nonexistent HALCONV_CLI=$PWD/.gpu/halconv HALCONV_DATA_DIR=$PWD/data
X='PlanGpuStreams.AutomaticBandsWhenTheDeviceIsFull:PlanGpuStreams.DeviceResidentImagesBeyondTheOneShotLimitRunInBands'
for s in 0 1 2 3 4 5 6 7; do GTEST_TOTAL_SHARDS=8 GTEST_SHARD_INDEX=$s timeout 260 .gpu/halconv_tests --gtest_brief=1 --gtest_filter="-$X" > $OUT/shard$s.log 2>&1 & done; wait
timeout 60 .gpu/halconv_tests --gtest_brief=1 --gtest_filter="$X" > $OUT/alone.log 2>&1
timeout 60 .gpu/halconv_tests --gtest_filter='CudaSeparableTensorCore.SeparableEntry*:SeparableTensorCoreRule*' > $OUT/rule-tests.log 2>&1
date -u >> $OUT/device.txt
timeout 60 .gpu/halconv_bench --report separable --max-ms 1 --sizes 2048,4096,8192,3840x2160 --kernels 31,33,35 > $OUT/separable.log 2>&1
date -u >> $OUT/device.txt
cd $OUT && tar czf ../r.tgz . && rm -rf ./* && mv ../r.tgz .
