#!/usr/bin/env bash
# Device call 5 (2026-11-29, fourteenth session): what the boundary rule costs the
# tensor-core passes (the producer stages the columns outside the image sample by sample):
# bench/probes/tensor_core_boundary_probe.cpp, built against the library of e650383, in mode
# same under every rule and in mode valid, K = 63, 121, 161, 193, twice.
cd "$(dirname "$0")/../../../../.."
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv > $OUT/device.txt; date -u >> $OUT/device.txt
for r in 1 2; do
  timeout 120 .gpu/tensor_core_boundary_probe 4096x4096,8192x8192,3840x2160 63,121,161,193 > $OUT/boundary-$r.csv 2> $OUT/boundary-$r.err
done
date -u >> $OUT/device.txt
cd $OUT && tar czf ../r.tgz . && rm -rf ./* && mv ../r.tgz .
