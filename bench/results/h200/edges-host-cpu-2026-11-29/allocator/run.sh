#!/usr/bin/env bash
# Device call 1 (2026-11-29, twelfth session): the bundle of bccf8f2, with Halide's host
# allocations kept for reuse (src/runtime_hooks.cpp): the pipelines report twice at 16
# threads, the host-CPU rows at 4 and 1 threads at 4096²; then the tensor-core entry and rule
# tests with tensor_core_min_taps = 70 (not run on a GPU since that change).
cd "$(dirname "$0")/../../../../.."
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv > $OUT/device.txt; date -u >> $OUT/device.txt
lscpu > $OUT/cpu.txt
export HALCONV_WISDOM=/nonexistent
for r in 1 2; do
  timeout 150 .gpu/halconv_bench --report pipelines --sizes 4096,8192,3840x2160 --csv $OUT/pipelines-$r.csv > $OUT/pipelines-$r.log 2>&1
done
for t in 4 1; do
  HL_NUM_THREADS=$t timeout 100 .gpu/halconv_bench --report pipelines --sizes 4096 > $OUT/threads-$t.log 2>&1
done
timeout 120 .gpu/halconv_tests --gtest_filter='CudaSeparableTensorCore*:SeparableTensorCoreRule*:RuntimeHooks*:Edges*' > $OUT/tests.log 2>&1
date -u >> $OUT/device.txt
cd $OUT && tar czf ../r.tgz . && rm -rf ./* && mv ../r.tgz .
