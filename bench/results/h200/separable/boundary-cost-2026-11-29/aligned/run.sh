#!/usr/bin/env bash
# Device call 6 (2026-11-29, fourteenth session): is it the output rows' 16-byte alignment that
# makes mode valid at K = 63 slow (../RUN.md)? The same probe on widths 2 below a multiple of 4
# (rows not 16-byte aligned in mode same too) beside the aligned ones, K = 63 and 121, twice.
cd "$(dirname "$0")/../../../../../.."
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv > $OUT/device.txt; date -u >> $OUT/device.txt
for r in 1 2; do
  timeout 120 .gpu/tensor_core_boundary_probe 4094x4096,4096x4096,8190x8192,8192x8192,3838x2160,3840x2160 63,121 > $OUT/aligned-$r.csv 2> $OUT/aligned-$r.err
done
date -u >> $OUT/device.txt
cd $OUT && tar czf ../r.tgz . && rm -rf ./* && mv ../r.tgz .
