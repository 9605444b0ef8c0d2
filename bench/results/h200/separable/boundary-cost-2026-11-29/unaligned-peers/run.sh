#!/usr/bin/env bash
# Device call 7 (2026-11-29, fourteenth session): on images whose rows are not 16-byte aligned
# (widths 2 below a multiple of 4), do the other separable paths beat the tensor-core passes,
# which run 4-5x slower there (../aligned/)? The sliding pass and fft_lines
# (bench/probes/separable_crossover_probe.cpp) and the passes (tensor_core_boundary_probe),
# mode same, K = 33, 63, 121, built against the library of e650383.
cd "$(dirname "$0")/../../../../../.."
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv > $OUT/device.txt; date -u >> $OUT/device.txt
S=2046x2048,4094x4096,8190x8192,3838x2160,4096x4096
timeout 200 .gpu/crossover_probe same f32 $S 33x33,63x63,121x121 > $OUT/sliding-fft.csv 2> $OUT/sliding-fft.err
timeout 120 .gpu/tensor_core_boundary_probe $S 33,63,121 > $OUT/tensor-core.csv 2> $OUT/tensor-core.err
date -u >> $OUT/device.txt
cd $OUT && tar czf ../r.tgz . && rm -rf ./* && mv ../r.tgz .
