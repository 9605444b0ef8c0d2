#!/usr/bin/env bash
# Device call (2026-11-28, 23:28Z): the tensor-core separable passes' tile shapes.
# MB (64-output blocks a tile) by depth, B buffers a consumer, stages:
# base: MB 3 to depth 128 / 2 beyond, 2 buffers, 3 stages (the library's before).
# v1: MB 4 / 3, 1 buffer, 3 stages.  v2: MB 4 / 3, 2 buffers, 1 stage.  v3: MB 3 / 2, 1 buffer, 3 stages.
# Each binary built from the tree with the shape given to the kernel by a macro (not kept);
# the bench binaries take the passes everywhere (tensor_core_min_taps = 2, min outputs 1).
# v2 is invalid: with one stage the two consumers' waits cannot be told apart by the
# barrier's phase (its tests failed; the kernel now has a stage a consumer, the reason in a comment).
cd "$(dirname "$0")/.."
export HALCONV_WISDOM=/nonexistent
nvidia-smi --query-gpu=name,driver_version --format=csv > $OUT/device.txt 2>&1
for round in 1 2; do
  for v in base v1 v2 v3; do
    timeout 60 .gpu/halconv_bench_$v --report separable --max-ms 1 \
      --sizes 4096,3840x2160,8192 --kernels 31,63,95,127 > $OUT/sep-$v-$round.log 2>&1
  done
done
for v in v1 v2; do
  timeout 100 .gpu/halconv_tests_$v --gtest_filter='CudaSeparableTensorCore*' > $OUT/tc-tests-$v.log 2>&1
  echo "rc=$?" >> $OUT/tc-tests-$v.log
done
cd $OUT && tar czf ../r.tgz . && rm -rf ./* && mv ../r.tgz .
