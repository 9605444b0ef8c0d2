#!/usr/bin/env bash
# Device call 2 (2026-11-29): as call 1, the boxes stored only for tiles that start at or past
# output 0 (a box at a negative coordinate faulted in call 1): the passes' tests, memcheck and
# racecheck, the separable report of d2d6a95 (halconv_bench_old) and of this build
# alternated, twice.
cd "$(dirname "$0")/../../../../../.."
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv > $OUT/device.txt; date -u >> $OUT/device.txt
export HALCONV_WISDOM=/nonexistent HALCONV_DATA_DIR=$PWD/data
timeout 150 .gpu/halconv_tests --gtest_filter='CudaSeparableTensorCore*:SeparableTensorCoreRule*' > $OUT/tc-tests.log 2>&1; echo "rc=$?" >> $OUT/tc-tests.log
timeout 150 /usr/local/cuda/bin/compute-sanitizer --tool memcheck .gpu/halconv_tests --gtest_brief=1 \
  --gtest_filter='CudaSeparableTensorCore.AlignsTiles*:CudaSeparableTensorCore.KeepsNonFinite*' > $OUT/memcheck.log 2>&1; echo "rc=$?" >> $OUT/memcheck.log
timeout 120 /usr/local/cuda/bin/compute-sanitizer --tool racecheck .gpu/halconv_tests --gtest_brief=1 \
  --gtest_filter='CudaSeparableTensorCore.KeepsNonFinite*' > $OUT/racecheck.log 2>&1; echo "rc=$?" >> $OUT/racecheck.log
date -u >> $OUT/device.txt
K=31,43,63,79,127,151,161,193
for r in 1 2; do for b in old new; do
  exe=.gpu/halconv_bench; [ $b = old ] && exe=.gpu/halconv_bench_old
  timeout 100 $exe --report separable --max-ms 1 --sizes 4096,8192,3840x2160 --kernels $K > $OUT/separable-$b-$r.log 2>&1
done; done
date -u >> $OUT/device.txt
cd $OUT && tar czf ../r.tgz . && rm -rf ./* && mv ../r.tgz .
