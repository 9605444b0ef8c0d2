#!/usr/bin/env bash
# Device call (2026-11-28, 23:35Z): tile shapes with one B buffer a consumer. MB by depth
# 96 / 128 / 160 / 192, buffers, stages:
# v1: 4 4 3 3, 1, 3.  v5: 4 4 3 3, 1, 2.  v4: 5 5 4 4, 1, 2.  v6: 6 5 4 4, 1, 2.
# The bench binaries take the passes everywhere (tensor_core_min_taps = 2, min outputs 1);
# _nowhere never (tensor_core_min_taps = 100000): the other forms.
cd "$(dirname "$0")/.."
export HALCONV_WISDOM=/nonexistent
nvidia-smi --query-gpu=name,driver_version --format=csv > $OUT/device.txt 2>&1
for round in 1 2; do
  for v in v1 v5 v4 v6; do
    timeout 60 .gpu/halconv_bench_$v --report separable --max-ms 1 \
      --sizes 4096,3840x2160,8192 --kernels 31,63,95,127 > $OUT/sep-$v-$round.log 2>&1
  done
done
for v in v4 v6 nowhere; do
  timeout 100 .gpu/halconv_bench_$v --report separable --max-ms 1 \
    --sizes 1024,2048,4096,3840x2160 --kernels 15,23,31,39,47,55,63,79,95,127 > $OUT/cross-$v.log 2>&1
done
for v in v4 v6; do
  timeout 100 .gpu/halconv_tests_$v --gtest_filter='CudaSeparableTensorCore*' > $OUT/tc-tests-$v.log 2>&1
  echo "rc=$?" >> $OUT/tc-tests-$v.log
done
cd $OUT && tar czf ../r.tgz . && rm -rf ./* && mv ../r.tgz .
