#!/usr/bin/env bash
# Device call 8 (2026-11-29, thirteenth session): split_batch 4 (four lines a warp at once)
# with the tree of maxima (halconv_bench_l4) against split_batch 2 (halconv_bench, 5039c55's
# kernel), the separable report alternated, three times.
cd "$(dirname "$0")/../../../../../.."
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv > $OUT/device.txt; date -u >> $OUT/device.txt
export HALCONV_WISDOM=/nonexistent HALCONV_DATA_DIR=$PWD/data
for r in 1 2 3; do for b in l2 l4; do
  exe=.gpu/halconv_bench; [ $b = l4 ] && exe=.gpu/halconv_bench_l4
  timeout 50 $exe --report separable --max-ms 1 --sizes 4096,8192,3840x2160 --kernels 35,47,63,79,97,127,161,193 > $OUT/separable-$b-$r.log 2>&1
done; done
date -u >> $OUT/device.txt
cd $OUT && tar czf ../r.tgz . && rm -rf ./* && mv ../r.tgz .
