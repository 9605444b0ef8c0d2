#!/usr/bin/env bash
# Device call 8 (2026-11-29, fourteenth session): the separable entry with the row-width rule
# (images not a multiple of 4 samples wide left to the sliding pass and fft_lines): the whole
# suite in 8 shards and the two PlanGpuStreams tests alone, the rule's tests, and the separable
# report (the entry's own choice) on 4094 x 4096 and 4096^2, K = 33, 63, 121.
cd "$(dirname "$0")/../../../../../.."
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv > $OUT/device.txt; date -u >> $OUT/device.txt
export HALCONV_WISDOM=/nonexistent HALCONV_CLI=$PWD/.gpu/halconv HALCONV_DATA_DIR=$PWD/data
X='PlanGpuStreams.AutomaticBandsWhenTheDeviceIsFull:PlanGpuStreams.DeviceResidentImagesBeyondTheOneShotLimitRunInBands'
for s in 0 1 2 3 4 5 6 7; do GTEST_TOTAL_SHARDS=8 GTEST_SHARD_INDEX=$s timeout 260 .gpu/halconv_tests --gtest_brief=1 --gtest_filter="-$X" > $OUT/shard$s.log 2>&1 & done; wait
timeout 60 .gpu/halconv_tests --gtest_brief=1 --gtest_filter="$X" > $OUT/alone.log 2>&1
timeout 60 .gpu/halconv_tests --gtest_filter='CudaSeparableTensorCore.SeparableEntry*:SeparableTensorCoreRule*' > $OUT/rule-tests.log 2>&1
date -u >> $OUT/device.txt
timeout 60 .gpu/halconv_bench --report separable --max-ms 1 --sizes 4094x4096,4096 --kernels 33,63,121 > $OUT/separable.log 2>&1
date -u >> $OUT/device.txt
cd $OUT && tar czf ../r.tgz . && rm -rf ./* && mv ../r.tgz .
