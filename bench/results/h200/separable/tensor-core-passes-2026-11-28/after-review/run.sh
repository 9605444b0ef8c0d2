#!/usr/bin/env bash
# After the review's mends (2026-11-28): the tensor-core passes' tests, sanitizers, and the
# separable report at 4096^2 and 3840x2160.
cd "$(dirname "$0")/.."
export HALCONV_WISDOM=/nonexistent
nvidia-smi --query-gpu=name,driver_version --format=csv > $OUT/device.txt 2>&1
timeout 60 .gpu/halconv_bench --report separable --sizes 4096,3840x2160 --kernels 63,127 > $OUT/separable.log 2>&1
timeout 90 .gpu/halconv_tests --gtest_filter='CudaSeparableTensorCore*' > $OUT/tc-tests.log 2>&1
echo "rc=$?" >> $OUT/tc-tests.log
timeout 40 /usr/local/cuda/bin/compute-sanitizer --tool memcheck .gpu/halconv_tests --gtest_brief=1 \
  --gtest_filter='CudaSeparableTensorCore.KeepsNonFinite*' > $OUT/memcheck.log 2>&1
echo "rc=$?" >> $OUT/memcheck.log
timeout 40 /usr/local/cuda/bin/compute-sanitizer --tool racecheck .gpu/halconv_tests --gtest_brief=1 \
  --gtest_filter='CudaSeparableTensorCore.KeepsNonFinite*' > $OUT/racecheck.log 2>&1
echo "rc=$?" >> $OUT/racecheck.log
cd $OUT && tar czf ../r.tgz . && rm -rf ./* && mv ../r.tgz .
