#!/usr/bin/env bash
# Device call 5 (2026-11-29, fifteenth session): which per-phase TMA loads fault. Built here with
#   nvcc -O2 -arch=sm_90a -std=c++17 tma_phase_probe.cu -o .gpu/tma_phase_probe -lcuda
# and run (carry .gpu/tma_phase_probe) as: PITCH PHASES BOX_ROWS DST_STEP [WHICH MAP ONLY]
for c in "304 1 32 4096" "301 4 8 1024" "301 4 8 1024 0" "301 4 8 1024 1" "301 4 8 1024 3" "302 2 16 2048" "302 2 16 2048 1" "304 4 8 1024" "304 2 16 2048" "301 4 1 128" "304 4 1 128" "304 4 8 1024 1"; do timeout 20 .gpu/tma_phase_probe $c 2>&1 | grep -v "^map"; done
