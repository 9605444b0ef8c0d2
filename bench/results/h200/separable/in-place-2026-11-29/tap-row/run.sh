#!/usr/bin/env bash
# Device call 6 (2026-11-29, thirteenth session): the Toeplitz fragments read from the taps
# written once to shared memory (tap_row) instead of gathered from global memory by every
# thread: a smoke test, the whole suite in 8 shards and the two memory-hungry PlanGpuStreams
# tests alone, memcheck on the passes' alignment and non-finite tests, the separable report of
# the tree-of-maxima build (halconv_bench_old) and of this one alternated, twice, and the
# pipelines report (gaussian_blur plans) of this build.
cd "$(dirname "$0")/../../../../../.."
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv > $OUT/device.txt; date -u >> $OUT/device.txt
export HALCONV_WISDOM=/nonexistent HALCONV_CLI=$PWD/.gpu/halconv HALCONV_DATA_DIR=$PWD/data
timeout 60 .gpu/halconv_tests --gtest_filter='CudaSeparableTensorCore.AlignsTilesAtEveryOffset' > $OUT/smoke.log 2>&1; rc=$?; echo "rc=$rc" >> $OUT/smoke.log
if [ $rc -ne 0 ]; then cd $OUT && tar czf ../r.tgz . && rm -rf ./* && mv ../r.tgz .; exit 0; fi
X='PlanGpuStreams.AutomaticBandsWhenTheDeviceIsFull:PlanGpuStreams.DeviceResidentImagesBeyondTheOneShotLimitRunInBands'
for s in 0 1 2 3 4 5 6 7; do GTEST_TOTAL_SHARDS=8 GTEST_SHARD_INDEX=$s timeout 260 .gpu/halconv_tests --gtest_brief=1 --gtest_filter="-$X" > $OUT/shard$s.log 2>&1 & done; wait
timeout 60 .gpu/halconv_tests --gtest_brief=1 --gtest_filter="$X" > $OUT/alone.log 2>&1
date -u >> $OUT/device.txt
timeout 120 /usr/local/cuda/bin/compute-sanitizer --tool memcheck .gpu/halconv_tests --gtest_brief=1 \
  --gtest_filter='CudaSeparableTensorCore.AlignsTiles*:CudaSeparableTensorCore.KeepsNonFinite*' > $OUT/memcheck.log 2>&1; echo "rc=$?" >> $OUT/memcheck.log
date -u >> $OUT/device.txt
for r in 1 2; do for b in old new; do
  exe=.gpu/halconv_bench; [ $b = old ] && exe=.gpu/halconv_bench_old
  timeout 60 $exe --report separable --max-ms 1 --sizes 4096,8192,3840x2160 --kernels 35,47,63,79,97,127,161,193 > $OUT/separable-$b-$r.log 2>&1
done; done
timeout 40 .gpu/halconv_bench --report pipelines --sizes 4096,8192,3840x2160 > $OUT/pipelines-new.log 2>&1
date -u >> $OUT/device.txt
cd $OUT && tar czf ../r.tgz . && rm -rf ./* && mv ../r.tgz .
