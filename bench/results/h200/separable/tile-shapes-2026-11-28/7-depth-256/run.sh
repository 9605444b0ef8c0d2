#!/usr/bin/env bash
# Device call (2026-11-29, 00:11Z): a sixth depth, 256 (up to 193 taps), at three 64-output blocks
# a tile (four spilled): its tests under memcheck, its crossover against fft_lines
# (_everywhere takes the passes for every case, _nowhere never).
cd "$(dirname "$0")/.."
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv > $OUT/device.txt; date -u >> $OUT/device.txt
export HALCONV_WISDOM=/nonexistent HALCONV_CLI=$PWD/.gpu/halconv HALCONV_DATA_DIR=$PWD/data
timeout 120 .gpu/halconv_tests --gtest_filter='CudaSeparableTensorCore*' > $OUT/tc-tests.log 2>&1; echo "rc=$?" >> $OUT/tc-tests.log
timeout 60 /usr/local/cuda/bin/compute-sanitizer --tool memcheck .gpu/halconv_tests --gtest_brief=1 \
  --gtest_filter='CudaSeparableTensorCore.KeepsNonFinite*' > $OUT/memcheck.log 2>&1; echo "rc=$?" >> $OUT/memcheck.log
for v in everywhere nowhere; do
  timeout 100 .gpu/halconv_bench_$v --report separable --max-ms 1 --sizes 2048,4096,8192,3840x2160 \
    --kernels 63,127,161,177,193 > $OUT/cross-$v.log 2>&1
done
date -u >> $OUT/device.txt
cd $OUT && tar czf ../r.tgz . && rm -rf ./* && mv ../r.tgz .
