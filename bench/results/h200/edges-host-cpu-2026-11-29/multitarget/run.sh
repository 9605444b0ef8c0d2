#!/usr/bin/env bash
# Device call 6 (2026-11-29): the bundle rebuilt with the shipped CPU multitarget (AVX-512 /
# AVX2 / baseline; the build directory had been left at the baseline target, which the calls
# before ran) and the floor's loop built for AVX2: the pipelines report at 16 threads, then
# the host-CPU rows at 4 and 1 threads at 4096².
cd "$(dirname "$0")/../../../../.."
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv > $OUT/device.txt; date -u >> $OUT/device.txt
export HALCONV_WISDOM=/nonexistent
timeout 150 .gpu/halconv_bench --report pipelines --sizes 4096,8192,3840x2160 --csv $OUT/pipelines.csv > $OUT/pipelines.log 2>&1
for t in 4 1; do
  HL_NUM_THREADS=$t timeout 100 .gpu/halconv_bench --report pipelines --sizes 4096 > $OUT/threads-$t.log 2>&1
done
date -u >> $OUT/device.txt
cd $OUT && tar czf ../r.tgz . && rm -rf ./* && mv ../r.tgz .
