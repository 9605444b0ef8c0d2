#!/usr/bin/env bash
# Device call (2026-11-28, 20:57Z): the tensor-core passes against the other separable forms.
# halconv_bench_tc_everywhere / _tc_nowhere: the same tree built with tensor_core_min_taps = 2
# and tensor_core_min_outputs = 1 (the passes take every case) / tensor_core_min_taps = 100000
# (none), so that each form's time is measured on every case.
cd "$(dirname "$0")/.."
export HALCONV_WISDOM=/nonexistent HALCONV_CLI=$PWD/.gpu/halconv HALCONV_DATA_DIR=$PWD/data
nvidia-smi --query-gpu=name,driver_version --format=csv > $OUT/device.txt 2>&1
timeout 120 .gpu/halconv_bench_tc_everywhere --report separable --sizes 1024,2048,4096,8192,3840x2160 --kernels 15,31,47,63,79,95,111,127 > $OUT/sep-tc.log 2>&1
timeout 120 .gpu/halconv_bench_tc_nowhere --report separable --sizes 2048,4096 --kernels 47,63,79,95,111,127 > $OUT/sep-notc.log 2>&1
timeout 100 .gpu/halconv_tests --gtest_filter='CudaSeparableTensorCore*' > $OUT/tc-tests.log 2>&1
timeout 90 /usr/local/cuda/bin/compute-sanitizer --tool memcheck .gpu/halconv_tests --gtest_brief=1 \
  --gtest_filter='CudaSeparableTensorCore.KeepsNonFinite*' > $OUT/memcheck.log 2>&1
timeout 90 /usr/local/cuda/bin/compute-sanitizer --tool racecheck .gpu/halconv_tests --gtest_brief=1 \
  --gtest_filter='CudaSeparableTensorCore.KeepsNonFinite*' > $OUT/racecheck.log 2>&1
