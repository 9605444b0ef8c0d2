#!/usr/bin/env bash
# Device call (2026-11-28, 23:43Z): more tile shapes, one B buffer a consumer.
# (MB, stages) by depth 96 / 128 / 160 / 192:
# v4: (5,2) (5,2) (4,2) (4,2)   v6: (6,2) (5,2) (4,2) (4,2)
# v7: (4,4) (6,2) (3,4) (5,2)   v8: (6,2) (5,2) (5,2) (4,2)
# The bench binaries take the passes everywhere (tensor_core_min_taps = 2, min outputs 1).
cd "$(dirname "$0")/.."
export HALCONV_WISDOM=/nonexistent
nvidia-smi --query-gpu=name,driver_version --format=csv > $OUT/device.txt 2>&1
for round in 1 2; do
  for v in v4 v6 v7 v8; do
    timeout 60 .gpu/halconv_bench_$v --report separable --max-ms 1 \
      --sizes 4096,3840x2160,8192 --kernels 31,63,95,127 > $OUT/sep-$v-$round.log 2>&1
  done
done
for v in v7 v8; do
  timeout 100 .gpu/halconv_tests_$v --gtest_filter='CudaSeparableTensorCore*' > $OUT/tc-tests-$v.log 2>&1
  echo "rc=$?" >> $OUT/tc-tests-$v.log
done
cd $OUT && tar czf ../r.tgz . && rm -rf ./* && mv ../r.tgz .
