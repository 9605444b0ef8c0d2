#!/usr/bin/env bash
# The f16 rows call (2026-11-28 ~15:27 UTC, device tool, nvidia-h200):
# bench/probes/separable_crossover_probe.cpp linked against three builds of the library:
# xp_old (fc8d38c), xp_A (this change), xp_B (this change with the all-inside copy's row
# loop unrolled by 4 for 2-byte samples; not adopted). Run as: tar xJf .gpu.tar.xz && bash .gpu/run.sh
cd "$(dirname "$0")/.."
K=3x3,7x7,15x15,31x31,47x47,63x63,79x79,95x95,127x127
for rep in 1 2; do for v in old A B; do for p in f16 f16f32 f32; do
  .gpu/xp_$v same $p 1024x1024,4096x4096,8192x8192 $K > $OUT/$v-$p-$rep.csv 2>&1
done; done; done
