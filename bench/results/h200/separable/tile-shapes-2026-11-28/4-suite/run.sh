#!/usr/bin/env bash
# Device call (2026-11-28, 23:49Z): the kernel as committed but for the fifth depth (most
# blocks shared memory takes, one B buffer a consumer, two stages; depths 96-192) under the
# rule of that moment (76 taps together, 2^22 outputs): the passes' tests under memcheck and
# racecheck, the separable and pipelines reports, then the whole suite in 8 shards.
cd "$(dirname "$0")/.."
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv > $OUT/device.txt; date -u >> $OUT/device.txt
export HALCONV_WISDOM=/nonexistent HALCONV_CLI=$PWD/.gpu/halconv HALCONV_DATA_DIR=$PWD/data
timeout 100 .gpu/halconv_tests --gtest_filter='CudaSeparableTensorCore*' > $OUT/tc-tests.log 2>&1; echo "rc=$?" >> $OUT/tc-tests.log
timeout 60 /usr/local/cuda/bin/compute-sanitizer --tool memcheck .gpu/halconv_tests --gtest_brief=1 \
  --gtest_filter='CudaSeparableTensorCore.KeepsNonFinite*' > $OUT/memcheck.log 2>&1; echo "rc=$?" >> $OUT/memcheck.log
timeout 60 /usr/local/cuda/bin/compute-sanitizer --tool racecheck .gpu/halconv_tests --gtest_brief=1 \
  --gtest_filter='CudaSeparableTensorCore.KeepsNonFinite*' > $OUT/racecheck.log 2>&1; echo "rc=$?" >> $OUT/racecheck.log
timeout 90 .gpu/halconv_bench --report separable --max-ms 1 --sizes 1024,2048,4096,8192,3840x2160 --kernels 15,31,39,47,63,79,95,111,127 > $OUT/separable.log 2>&1
timeout 60 .gpu/halconv_bench --report pipelines --sizes 1024,4096,8192,3840x2160 > $OUT/pipelines.log 2>&1
date -u >> $OUT/device.txt
X='PlanGpuStreams.AutomaticBandsWhenTheDeviceIsFull:PlanGpuStreams.DeviceResidentImagesBeyondTheOneShotLimitRunInBands'
for s in 0 1 2 3 4 5 6 7; do GTEST_TOTAL_SHARDS=8 GTEST_SHARD_INDEX=$s timeout 330 .gpu/halconv_tests --gtest_brief=1 --gtest_filter="-$X" > $OUT/shard$s.log 2>&1 & done; wait
date -u >> $OUT/device.txt
timeout 60 .gpu/halconv_tests --gtest_brief=1 --gtest_filter="$X" > $OUT/alone.log 2>&1
date -u >> $OUT/device.txt
cd $OUT && tar czf ../r.tgz . && rm -rf ./* && mv ../r.tgz .
