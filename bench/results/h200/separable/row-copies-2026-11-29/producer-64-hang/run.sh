#!/usr/bin/env bash
# Device call 7 (2026-11-29, fifteenth session): the adopted form (the producer's 4-byte cp.async
# copies as in cp-async/, producer at 64 registers: no spills) built in full by scripts/build-gpu-bundle: the whole suite in 8 shards
# and the two memory-hungry PlanGpuStreams tests alone, memcheck and racecheck on the
# tensor-core tests whose rows are unaligned, the boundary probe once, and the separable report
# on aligned sizes (the TMA path, unchanged).
cd "$(dirname "$0")/../../../../../.."
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv > $OUT/device.txt; date -u >> $OUT/device.txt
export HALCONV_WISDOM=/nonexistent HALCONV_CLI=$PWD/.gpu/halconv HALCONV_DATA_DIR=$PWD/data
X='PlanGpuStreams.AutomaticBandsWhenTheDeviceIsFull:PlanGpuStreams.DeviceResidentImagesBeyondTheOneShotLimitRunInBands'
for s in 0 1 2 3 4 5 6 7; do GTEST_TOTAL_SHARDS=8 GTEST_SHARD_INDEX=$s timeout 260 .gpu/halconv_tests --gtest_brief=1 --gtest_filter="-$X" > $OUT/shard$s.log 2>&1 & done; wait
timeout 60 .gpu/halconv_tests --gtest_brief=1 --gtest_filter="$X" > $OUT/alone.log 2>&1
date -u >> $OUT/device.txt
timeout 150 /usr/local/cuda/bin/compute-sanitizer --tool memcheck --error-exitcode 3 .gpu/halconv_tests --gtest_brief=1 \
  --gtest_filter='CudaSeparableTensorCore.*' > $OUT/memcheck.log 2>&1; echo "rc=$?" >> $OUT/memcheck.log
timeout 120 /usr/local/cuda/bin/compute-sanitizer --tool racecheck --error-exitcode 3 .gpu/halconv_tests --gtest_brief=1 \
  --gtest_filter='CudaSeparableTensorCore.AlignsTiles*' > $OUT/racecheck.log 2>&1; echo "rc=$?" >> $OUT/racecheck.log
date -u >> $OUT/device.txt
timeout 100 .gpu/tensor_core_boundary_probe 4094x4096,4096x4096,8190x8192,3838x2160 33,63,121 > $OUT/probe.csv 2> $OUT/probe.err
timeout 90 .gpu/halconv_bench --report separable --max-ms 1 --sizes 4096,3840x2160 --kernels 33,63,121 > $OUT/separable.log 2>&1
date -u >> $OUT/device.txt
cd $OUT && tar czf ../r.tgz . && rm -rf ./* && mv ../r.tgz .
