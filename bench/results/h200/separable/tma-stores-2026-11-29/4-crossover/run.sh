#!/usr/bin/env bash
# Device call 4 (2026-11-29): where the faster passes now overtake the sliding pass: the
# separable report of 297d41c (the sliding pass below 80 taps together) and of the same tree
# with tensor_core_min_taps = 2 (halconv_bench_tc: the passes from 2 taps), K = 31-41.
cd "$(dirname "$0")/../../../../../.."
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv > $OUT/device.txt; date -u >> $OUT/device.txt
export HALCONV_WISDOM=/nonexistent
for b in old new; do
  exe=.gpu/halconv_bench; [ $b = new ] && exe=.gpu/halconv_bench_tc
  timeout 60 $exe --report separable --max-ms 1 --sizes 2048,4096,8192,3840x2160 --kernels 31,33,35,37,39,41 > $OUT/separable-$b-1.log 2>&1
done
date -u >> $OUT/device.txt
cd $OUT && tar czf ../r.tgz . && rm -rf ./* && mv ../r.tgz .
