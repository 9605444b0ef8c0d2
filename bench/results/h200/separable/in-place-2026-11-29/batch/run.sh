#!/usr/bin/env bash
# Device call 3 (2026-11-29, thirteenth session): the in-place split taking L lines a warp at
# once (their loads in flight together, one __syncwarp before the parts overwrite them): the
# tests with L = 2, memcheck and racecheck, then the separable report of L = 1 (the build of
# ../run.sh, halconv_bench_v1), L = 2 (halconv_bench) and L = 4 (halconv_bench_l4), alternated.
cd "$(dirname "$0")/../../../../../.."
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv > $OUT/device.txt; date -u >> $OUT/device.txt
export HALCONV_WISDOM=/nonexistent HALCONV_DATA_DIR=$PWD/data
timeout 60 .gpu/halconv_tests --gtest_filter='CudaSeparableTensorCore.AlignsTilesAtEveryOffset' > $OUT/smoke.log 2>&1; rc=$?; echo "rc=$rc" >> $OUT/smoke.log
if [ $rc -ne 0 ]; then cd $OUT && tar czf ../r.tgz . && rm -rf ./* && mv ../r.tgz .; exit 0; fi
timeout 150 .gpu/halconv_tests --gtest_filter='CudaSeparableTensorCore*:SeparableTensorCoreRule*:*GaussianBlur*' > $OUT/tc-tests.log 2>&1; echo "rc=$?" >> $OUT/tc-tests.log
timeout 120 /usr/local/cuda/bin/compute-sanitizer --tool memcheck .gpu/halconv_tests --gtest_brief=1 \
  --gtest_filter='CudaSeparableTensorCore.AlignsTiles*:CudaSeparableTensorCore.KeepsNonFinite*' > $OUT/memcheck.log 2>&1; echo "rc=$?" >> $OUT/memcheck.log
timeout 120 /usr/local/cuda/bin/compute-sanitizer --tool racecheck .gpu/halconv_tests --gtest_brief=1 \
  --gtest_filter='CudaSeparableTensorCore.KeepsNonFinite*' > $OUT/racecheck.log 2>&1; echo "rc=$?" >> $OUT/racecheck.log
date -u >> $OUT/device.txt
for r in 1 2; do for b in v1 l2 l4; do
  exe=.gpu/halconv_bench_$b; [ $b = l2 ] && exe=.gpu/halconv_bench
  timeout 60 $exe --report separable --max-ms 1 --sizes 4096,8192,3840x2160 --kernels 35,47,63,79,97,127,161,193 > $OUT/separable-$b-$r.log 2>&1
done; done
date -u >> $OUT/device.txt
cd $OUT && tar czf ../r.tgz . && rm -rf ./* && mv ../r.tgz .
