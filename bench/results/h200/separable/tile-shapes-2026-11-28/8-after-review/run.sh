#!/usr/bin/env bash
# Device call (2026-11-29, 00:17Z, after the review): the committed tree's tensor-core tests (the
# depth-256 kernel's lower edge, 162 taps, added), memcheck and racecheck on the non-finite test.
cd "$(dirname "$0")/.."
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv > $OUT/device.txt; date -u >> $OUT/device.txt
export HALCONV_WISDOM=/nonexistent
timeout 120 .gpu/halconv_tests --gtest_filter='CudaSeparableTensorCore*' > $OUT/tc-tests.log 2>&1; echo "rc=$?" >> $OUT/tc-tests.log
timeout 60 /usr/local/cuda/bin/compute-sanitizer --tool memcheck .gpu/halconv_tests --gtest_brief=1 \
  --gtest_filter='CudaSeparableTensorCore.KeepsNonFinite*' > $OUT/memcheck.log 2>&1; echo "rc=$?" >> $OUT/memcheck.log
timeout 60 /usr/local/cuda/bin/compute-sanitizer --tool racecheck .gpu/halconv_tests --gtest_brief=1 \
  --gtest_filter='CudaSeparableTensorCore.KeepsNonFinite*' > $OUT/racecheck.log 2>&1; echo "rc=$?" >> $OUT/racecheck.log
date -u >> $OUT/device.txt
cd $OUT && tar czf ../r.tgz . && rm -rf ./* && mv ../r.tgz .
