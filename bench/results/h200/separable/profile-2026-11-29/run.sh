#!/usr/bin/env bash
# Device call 4 (2026-11-29, twelfth session): where the tensor-core row pass's time goes, by
# SASS instruction: Nsight Compute's source counters (stall samples per instruction) and warp
# states on line_pass<128> (K = 63) at 4096², the build of bccf8f2 (.gpu/halconv_bench_old).
cd "$(dirname "$0")/../../../../.."
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv > $OUT/device.txt; date -u >> $OUT/device.txt
export HALCONV_WISDOM=/nonexistent HALCONV_DATA_DIR=$PWD/data
timeout 240 ncu --kernel-name regex:line_pass --launch-skip 2 --launch-count 1 --section WarpStateStats \
  --section SourceCounters --section SpeedOfLight --section SchedulerStats --page details --print-details all \
  .gpu/halconv_bench_old --report separable --sizes 4096 --kernels 63 --max-ms 1 > $OUT/ncu-details.txt 2>&1
timeout 200 ncu --kernel-name regex:line_pass --launch-skip 2 --launch-count 1 --section SourceCounters \
  --page source --print-source sass --csv \
  .gpu/halconv_bench_old --report separable --sizes 4096 --kernels 63 --max-ms 1 > $OUT/ncu-sass.csv 2>&1
date -u >> $OUT/device.txt
cd $OUT && gzip -9 ncu-sass.csv; tar czf ../r.tgz . && rm -rf ./* && mv ../r.tgz .
