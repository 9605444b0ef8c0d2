#!/usr/bin/env bash
# Device call 5 (2026-11-29, twelfth session): the tensor-core passes with two stages a
# consumer (stages = 2 * consumers, so that each consumer's next tile is copied while it works
# on this one; most_blocks then fits 3 blocks of 64 outputs at depths 96-128, 2 at 160-192, 1
# at 224-256) against bccf8f2 (one stage a consumer), alternated, twice.
cd "$(dirname "$0")/../../../../.."
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv > $OUT/device.txt; date -u >> $OUT/device.txt
export HALCONV_WISDOM=/nonexistent HALCONV_DATA_DIR=$PWD/data
K=35,47,63,79,97,127,161,193
for r in 1 2; do for b in old stages4; do
  timeout 70 .gpu/halconv_bench_$b --report separable --max-ms 1 --sizes 4096,8192,3840x2160 --kernels $K > $OUT/separable-$b-$r.log 2>&1
done; done
date -u >> $OUT/device.txt
cd $OUT && tar czf ../r.tgz . && rm -rf ./* && mv ../r.tgz .
