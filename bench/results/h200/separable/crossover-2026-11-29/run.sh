#!/usr/bin/env bash
# Device call 2 (2026-11-29, fourteenth session): where the tensor-core passes now overtake
# the sliding pass, after the split in place (78d35c7) and its follow-ups made them 6-13 %
# faster: the separable report of 34813ff (the passes from 70 taps together) and of the same
# tree with src/limits.cpp's rule at 2 taps (halconv_bench_tc), K = 17-37, twice, alternated.
cd "$(dirname "$0")/../../../../.."
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv > $OUT/device.txt; date -u >> $OUT/device.txt
export HALCONV_WISDOM=/nonexistent
for r in 1 2; do
  for b in old tc; do
    exe=.gpu/halconv_bench; [ $b = tc ] && exe=.gpu/halconv_bench_tc
    timeout 100 $exe --report separable --max-ms 1 --sizes 2048,4096,8192,3840x2160 --kernels 17,21,25,27,29,31,33,35,37 > $OUT/separable-$b-$r.log 2>&1
  done
done
date -u >> $OUT/device.txt
cd $OUT && tar czf ../r.tgz . && rm -rf ./* && mv ../r.tgz .
