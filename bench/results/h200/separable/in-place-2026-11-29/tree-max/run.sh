#!/usr/bin/env bash
# Device call 5 (2026-11-29, thirteenth session): the split's largest magnitude as a tree of
# maxima (and the zeroing past `needed` behind a warp-uniform test): the tensor-core and
# Gaussian tests, memcheck, then the separable report of 78d35c7 (halconv_bench_old) and of
# this build alternated, three times.
cd "$(dirname "$0")/../../../../../.."
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv > $OUT/device.txt; date -u >> $OUT/device.txt
export HALCONV_WISDOM=/nonexistent HALCONV_DATA_DIR=$PWD/data
timeout 60 .gpu/halconv_tests --gtest_filter='CudaSeparableTensorCore.AlignsTilesAtEveryOffset' > $OUT/smoke.log 2>&1; rc=$?; echo "rc=$rc" >> $OUT/smoke.log
if [ $rc -ne 0 ]; then cd $OUT && tar czf ../r.tgz . && rm -rf ./* && mv ../r.tgz .; exit 0; fi
timeout 150 .gpu/halconv_tests --gtest_filter='CudaSeparableTensorCore*:SeparableTensorCoreRule*:*GaussianBlur*' > $OUT/tc-tests.log 2>&1; echo "rc=$?" >> $OUT/tc-tests.log
timeout 120 /usr/local/cuda/bin/compute-sanitizer --tool memcheck .gpu/halconv_tests --gtest_brief=1 \
  --gtest_filter='CudaSeparableTensorCore.AlignsTiles*:CudaSeparableTensorCore.KeepsNonFinite*' > $OUT/memcheck.log 2>&1; echo "rc=$?" >> $OUT/memcheck.log
date -u >> $OUT/device.txt
for r in 1 2 3; do for b in old new; do
  exe=.gpu/halconv_bench; [ $b = old ] && exe=.gpu/halconv_bench_old
  timeout 60 $exe --report separable --max-ms 1 --sizes 4096,8192,3840x2160 --kernels 35,47,63,79,97,127,161,193 > $OUT/separable-$b-$r.log 2>&1
done; done
date -u >> $OUT/device.txt
cd $OUT && tar czf ../r.tgz . && rm -rf ./* && mv ../r.tgz .
