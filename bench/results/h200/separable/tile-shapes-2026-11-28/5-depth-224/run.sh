#!/usr/bin/env bash
# Device call (2026-11-28, 23:57Z): a fifth kernel (224 deep, up to 161 taps), its tests
# under memcheck (46 cases: all matched; the test's case count still said 40, mended after);
# the crossover against the sliding pass (K 35-47) and fft_lines (K 127-161): _everywhere
# takes the passes for every case, _nowhere never; gaussian_blur by the rule of that moment.
cd "$(dirname "$0")/.."
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv > $OUT/device.txt; date -u >> $OUT/device.txt
export HALCONV_WISDOM=/nonexistent HALCONV_CLI=$PWD/.gpu/halconv HALCONV_DATA_DIR=$PWD/data
timeout 120 .gpu/halconv_tests --gtest_filter='CudaSeparableTensorCore*' > $OUT/tc-tests.log 2>&1; echo "rc=$?" >> $OUT/tc-tests.log
timeout 60 /usr/local/cuda/bin/compute-sanitizer --tool memcheck .gpu/halconv_tests --gtest_brief=1 \
  --gtest_filter='CudaSeparableTensorCore.KeepsNonFinite*' > $OUT/memcheck.log 2>&1; echo "rc=$?" >> $OUT/memcheck.log
for v in everywhere nowhere; do
  timeout 100 .gpu/halconv_bench_$v --report separable --max-ms 1 --sizes 2048,4096,8192,3840x2160 \
    --kernels 35,39,43,47,127,143,151,161 > $OUT/cross-$v.log 2>&1
done
timeout 60 .gpu/halconv_bench --report pipelines --sizes 2048,4096,8192,3840x2160 > $OUT/pipelines.log 2>&1
date -u >> $OUT/device.txt
cd $OUT && tar czf ../r.tgz . && rm -rf ./* && mv ../r.tgz .
