#!/usr/bin/env bash
# Device call 1 (2026-11-29, fifteenth session): the producer's asynchronous row copies for
# inputs whose rows TMA cannot copy. The tensor-core tests (direct, every shape, misaligned
# rows), memcheck and racecheck on the offsets test (images 741 and 611 wide: every input row
# unaligned), then the boundary probe on unaligned widths beside their aligned neighbours, twice.
cd "$(dirname "$0")/../../../../../.."
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv > $OUT/device.txt; date -u >> $OUT/device.txt
timeout 150 .gpu/halconv_tests --gtest_brief=1 --gtest_filter='CudaSeparableTensorCore.*:SeparableTensorCoreRule.*' > $OUT/tests.log 2>&1; echo "rc=$?" >> $OUT/tests.log
date -u >> $OUT/device.txt
timeout 150 /usr/local/cuda/bin/compute-sanitizer --tool memcheck --error-exitcode 3 .gpu/halconv_tests --gtest_brief=1 \
  --gtest_filter='CudaSeparableTensorCore.AlignsTiles*:CudaSeparableTensorCore.KeepsNonFinite*' > $OUT/memcheck.log 2>&1; echo "rc=$?" >> $OUT/memcheck.log
date -u >> $OUT/device.txt
timeout 120 /usr/local/cuda/bin/compute-sanitizer --tool racecheck --error-exitcode 3 .gpu/halconv_tests --gtest_brief=1 \
  --gtest_filter='CudaSeparableTensorCore.AlignsTiles*' > $OUT/racecheck.log 2>&1; echo "rc=$?" >> $OUT/racecheck.log
date -u >> $OUT/device.txt
for r in 1 2; do
  timeout 100 .gpu/tensor_core_boundary_probe 4094x4096,4096x4096,4095x4096,8190x8192,3838x2160,3840x2160,2046x2048 33,63,121 > $OUT/probe-$r.csv 2> $OUT/probe-$r.err
done
date -u >> $OUT/device.txt
cd $OUT && tar czf ../r.tgz . && rm -rf ./* && mv ../r.tgz .
