#!/usr/bin/env bash
# Final call (2026-11-29, 00:01Z, tile shapes): the committed tree (depths 96-224, one B buffer a
# consumer, two stages, the most 64-output blocks shared memory takes; rule 80 taps together,
# 2^22 outputs): the passes' tests, the separable report, then the whole suite in 8 shards.
cd "$(dirname "$0")/.."
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv > $OUT/device.txt; date -u >> $OUT/device.txt
export HALCONV_WISDOM=/nonexistent HALCONV_CLI=$PWD/.gpu/halconv HALCONV_DATA_DIR=$PWD/data
timeout 90 .gpu/halconv_bench --report separable --max-ms 1 --sizes 2048,4096,8192,3840x2160 --kernels 31,39,43,63,79,95,127,161 > $OUT/separable.log 2>&1
date -u >> $OUT/device.txt
X='PlanGpuStreams.AutomaticBandsWhenTheDeviceIsFull:PlanGpuStreams.DeviceResidentImagesBeyondTheOneShotLimitRunInBands'
for s in 0 1 2 3 4 5 6 7; do GTEST_TOTAL_SHARDS=8 GTEST_SHARD_INDEX=$s timeout 330 .gpu/halconv_tests --gtest_brief=1 --gtest_filter="-$X" > $OUT/shard$s.log 2>&1 & done; wait
date -u >> $OUT/device.txt
timeout 60 .gpu/halconv_tests --gtest_brief=1 --gtest_filter="$X" > $OUT/alone.log 2>&1
date -u >> $OUT/device.txt
cd $OUT && tar czf ../r.tgz . && rm -rf ./* && mv ../r.tgz .
