#!/usr/bin/env bash
# Device call 7 (2026-11-29, thirteenth session): the tree of the session's last kernel change
# (the split in place with the tree of maxima; the tap_row attempt reverted): the whole suite
# in 8 shards, the two memory-hungry PlanGpuStreams tests alone, and the pipelines report
# (gaussian_blur plans, edges), twice.
cd "$(dirname "$0")/../../../../../.."
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv > $OUT/device.txt; date -u >> $OUT/device.txt
export HALCONV_WISDOM=/nonexistent HALCONV_CLI=$PWD/.gpu/halconv HALCONV_DATA_DIR=$PWD/data
X='PlanGpuStreams.AutomaticBandsWhenTheDeviceIsFull:PlanGpuStreams.DeviceResidentImagesBeyondTheOneShotLimitRunInBands'
for s in 0 1 2 3 4 5 6 7; do GTEST_TOTAL_SHARDS=8 GTEST_SHARD_INDEX=$s timeout 260 .gpu/halconv_tests --gtest_brief=1 --gtest_filter="-$X" > $OUT/shard$s.log 2>&1 & done; wait
timeout 60 .gpu/halconv_tests --gtest_brief=1 --gtest_filter="$X" > $OUT/alone.log 2>&1
date -u >> $OUT/device.txt
for r in 1 2; do timeout 40 .gpu/halconv_bench --report pipelines --sizes 4096,8192,3840x2160 > $OUT/pipelines-$r.log 2>&1; done
date -u >> $OUT/device.txt
cd $OUT && tar czf ../r.tgz . && rm -rf ./* && mv ../r.tgz .
