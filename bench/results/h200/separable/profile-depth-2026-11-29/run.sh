#!/usr/bin/env bash
# Device call 4 (2026-11-29, fourteenth session): why the tensor-core passes take 25 % longer
# at depth 192 (K = 79-127; gaussian_blur sigma 20 is K = 121) than at depth 128 (K = 35-65):
# Nsight Compute's details of both passes (row, then column) at K = 63 and K = 121, 4096^2
# f32, and the source counters (SASS) of the row pass at K = 121, the tree of e650383.
cd "$(dirname "$0")/../../../../.."
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv > $OUT/device.txt; date -u >> $OUT/device.txt
export HALCONV_WISDOM=/nonexistent
for k in 63 121; do
  timeout 150 ncu --kernel-name regex:line_pass --launch-skip 2 --launch-count 2 --section WarpStateStats \
    --section SourceCounters --section SpeedOfLight --section SchedulerStats --section Occupancy \
    --section MemoryWorkloadAnalysis --page details --print-details all \
    .gpu/halconv_bench --report separable --sizes 4096 --kernels $k --max-ms 1 > $OUT/ncu-details-k$k.txt 2>&1
  date -u >> $OUT/device.txt
done
timeout 150 ncu --kernel-name regex:line_pass --launch-skip 2 --launch-count 1 --section SourceCounters \
  --page source --print-source sass --csv \
  .gpu/halconv_bench --report separable --sizes 4096 --kernels 121 --max-ms 1 > $OUT/ncu-sass-k121.csv 2>&1
date -u >> $OUT/device.txt
cd $OUT && gzip -9 ncu-sass-k121.csv; tar czf ../r.tgz . && rm -rf ./* && mv ../r.tgz .
