#!/usr/bin/env bash
# Device call 6 (2026-11-29, twelfth session): the tensor-core passes' split with fewer
# instructions a line (B offsets precomputed per lane, NaN/Inf found by a NaN-propagating max
# and the warp's REDUX instead of a probe sum and a vote, the scale's exponent read from the
# largest magnitude's bits): the passes' tests, memcheck on the non-finite and alignment
# tests, then the separable report of bccf8f2 (halconv_bench_old) and of this build
# alternated, twice.
cd "$(dirname "$0")/../../../../.."
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv > $OUT/device.txt; date -u >> $OUT/device.txt
export HALCONV_WISDOM=/nonexistent HALCONV_DATA_DIR=$PWD/data
timeout 150 .gpu/halconv_tests --gtest_filter='CudaSeparableTensorCore*:SeparableTensorCoreRule*:*GaussianBlur*' > $OUT/tc-tests.log 2>&1; echo "rc=$?" >> $OUT/tc-tests.log
timeout 120 /usr/local/cuda/bin/compute-sanitizer --tool memcheck .gpu/halconv_tests --gtest_brief=1 \
  --gtest_filter='CudaSeparableTensorCore.AlignsTiles*:CudaSeparableTensorCore.KeepsNonFinite*' > $OUT/memcheck.log 2>&1; echo "rc=$?" >> $OUT/memcheck.log
date -u >> $OUT/device.txt
K=35,47,63,79,97,127,161,193
for r in 1 2; do for b in old new; do
  exe=.gpu/halconv_bench; [ $b = old ] && exe=.gpu/halconv_bench_old
  timeout 60 $exe --report separable --max-ms 1 --sizes 4096,8192,3840x2160 --kernels $K > $OUT/separable-$b-$r.log 2>&1
done; done
date -u >> $OUT/device.txt
cd $OUT && tar czf ../r.tgz . && rm -rf ./* && mv ../r.tgz .
