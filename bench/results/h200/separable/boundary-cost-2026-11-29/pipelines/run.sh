#!/usr/bin/env bash
# Device call 9 (2026-11-29, fourteenth session): the pipelines report (gaussian_blur plans at
# sigma 3 / 10 / 20 / 25, the GPU and host-CPU edge pipelines) of the tree of ddb1c34, twice,
# for the session's closing figures.
cd "$(dirname "$0")/../../../../../.."
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv > $OUT/device.txt; date -u >> $OUT/device.txt
export HALCONV_WISDOM=/nonexistent HALCONV_DATA_DIR=$PWD/data
for r in 1 2; do timeout 60 .gpu/halconv_bench --report pipelines --sizes 4096,8192,3840x2160 > $OUT/pipelines-$r.log 2>&1; done
date -u >> $OUT/device.txt
cd $OUT && tar czf ../r.tgz . && rm -rf ./* && mv ../r.tgz .
