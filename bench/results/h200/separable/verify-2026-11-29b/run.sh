#!/usr/bin/env bash
# Device call 1 (2026-11-29, thirteenth session): ad500fb (the scale's exponent from the
# largest magnitude's bits, moved into common/split_f32.h) on a GPU for the first time: the
# tensor-core and Gaussian tests, memcheck on the non-finite and alignment tests, the
# separable report twice and the Gaussian plans (pipelines report's gaussian rows).
cd "$(dirname "$0")/../../../../.."
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv > $OUT/device.txt; date -u >> $OUT/device.txt
export HALCONV_WISDOM=/nonexistent HALCONV_DATA_DIR=$PWD/data
timeout 150 .gpu/halconv_tests --gtest_filter='CudaSeparableTensorCore*:SeparableTensorCoreRule*:*GaussianBlur*:SplitF32*' > $OUT/tc-tests.log 2>&1; echo "rc=$?" >> $OUT/tc-tests.log
timeout 120 /usr/local/cuda/bin/compute-sanitizer --tool memcheck .gpu/halconv_tests --gtest_brief=1 \
  --gtest_filter='CudaSeparableTensorCore.AlignsTiles*:CudaSeparableTensorCore.KeepsNonFinite*' > $OUT/memcheck.log 2>&1; echo "rc=$?" >> $OUT/memcheck.log
date -u >> $OUT/device.txt
for r in 1 2; do
  timeout 60 .gpu/halconv_bench --report separable --max-ms 1 --sizes 4096,8192,3840x2160 --kernels 35,47,63,79,97,127,161,193 > $OUT/separable-$r.log 2>&1
done
date -u >> $OUT/device.txt
cd $OUT && tar czf ../r.tgz . && rm -rf ./* && mv ../r.tgz .
