#!/usr/bin/env bash
# Device call 5 (2026-11-29): the CPU edge pipeline and the host's floor (the pipelines
# report's host-CPU rows) at 16, 8, 4, 2 and 1 threads of Halide's pool: 4096² and 8192² at
# 16, 8 and 4 threads, 4096² at 2 and 1 (the staged pipeline takes seconds a call there);
# then Nsight Compute on the tensor-core separable passes.
cd "$(dirname "$0")/../../../.."
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv > $OUT/device.txt; date -u >> $OUT/device.txt
export HALCONV_WISDOM=/nonexistent
for t in 16 8 4 2 1; do
  sizes=4096,8192; [ $t -le 2 ] && sizes=4096
  HL_NUM_THREADS=$t timeout 110 .gpu/halconv_bench --report pipelines --sizes $sizes > $OUT/threads-$t.log 2>&1
done
date -u >> $OUT/device.txt
# The tensor-core passes at 4096² K = 63 (the row pass, then the column pass) for the record:
# where their time goes, for the fused pass the issue's targets need.
timeout 150 ncu --kernel-name regex:line_pass --launch-skip 2 --launch-count 2 --section SpeedOfLight \
  --section WarpStateStats --section MemoryWorkloadAnalysis --section Occupancy --section LaunchStats \
  .gpu/halconv_bench --report separable --sizes 4096 --kernels 63 --max-ms 1 > $OUT/ncu-tc-k63.txt 2>&1
date -u >> $OUT/device.txt
cd $OUT && tar czf ../r.tgz . && rm -rf ./* && mv ../r.tgz .
