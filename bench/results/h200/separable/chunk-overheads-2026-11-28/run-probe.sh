#!/usr/bin/env bash
# The probe call (2026-11-28 ~15:08 UTC, device tool, nvidia-h200): .gpu/probe_old built
# from fc8d38c, .gpu/probe_new with next/chunk-overheads.patch of ../stage-copy-2026-11-28
# applied (nvcc -Iruntime_kernels -isystem <halide>/include -O3 -std=c++20 -arch=sm_90
# bench/probes/separable_sliding_probe.cu). Run as: tar xJf .gpu.tar.xz && bash .gpu/run.sh
cd "$(dirname "$0")/.."
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv > $OUT/device.txt
for s in 0 1 2 3 4 5 6 7; do .gpu/probe_new check cuda-cores $s 8 > $OUT/check$s.log 2>&1 & done; wait
tail -n 2 $OUT/check*.log
{
for rep in 1 2; do
for size in 4096 8192; do
for k in 3 5 7 9 15 21 31 47 63 95 127; do
  echo "== size $size K $k rep $rep"
  echo -n "old "; .gpu/probe_old $k $size cuda-cores
  echo -n "new "; .gpu/probe_new $k $size cuda-cores
done; done; done
} > $OUT/times.txt 2>&1
for v in old new; do for k in 3 15; do
ncu --kernel-name regex:separable_sliding --launch-skip 2 --launch-count 1 --section InstructionStats --section SpeedOfLight .gpu/probe_$v $k 4096 cuda-cores > $OUT/ncu_${v}_$k.txt 2>&1
done; done
