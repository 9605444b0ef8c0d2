#!/usr/bin/env bash
# Device call 4 (2026-11-29, thirteenth session): the tree of 78d35c7 (the split in place):
# the whole suite in 8 shards, the two memory-hungry PlanGpuStreams tests alone, the pipelines
# report (gaussian_blur plans, edges) of this build and of ad500fb, and Nsight Compute's
# source counters on the row pass of K = 63 at 4096^2 (line_pass<128>), as in
# ../../profile-2026-11-29/.
cd "$(dirname "$0")/../../../../../.."
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv > $OUT/device.txt; date -u >> $OUT/device.txt
export HALCONV_WISDOM=/nonexistent HALCONV_CLI=$PWD/.gpu/halconv HALCONV_DATA_DIR=$PWD/data
X='PlanGpuStreams.AutomaticBandsWhenTheDeviceIsFull:PlanGpuStreams.DeviceResidentImagesBeyondTheOneShotLimitRunInBands'
for s in 0 1 2 3 4 5 6 7; do GTEST_TOTAL_SHARDS=8 GTEST_SHARD_INDEX=$s timeout 260 .gpu/halconv_tests --gtest_brief=1 --gtest_filter="-$X" > $OUT/shard$s.log 2>&1 & done; wait
date -u >> $OUT/device.txt
timeout 60 .gpu/halconv_tests --gtest_brief=1 --gtest_filter="$X" > $OUT/alone.log 2>&1
date -u >> $OUT/device.txt
for b in new old; do
  exe=.gpu/halconv_bench; [ $b = old ] && exe=.gpu/halconv_bench_old
  timeout 40 $exe --report pipelines --sizes 4096,8192,3840x2160 > $OUT/pipelines-$b.log 2>&1
done
date -u >> $OUT/device.txt
timeout 120 ncu --kernel-name regex:line_pass --launch-skip 2 --launch-count 1 --section WarpStateStats \
  --section SourceCounters --section SpeedOfLight --section SchedulerStats --page details --print-details all \
  .gpu/halconv_bench --report separable --sizes 4096 --kernels 63 --max-ms 1 > $OUT/ncu-details.txt 2>&1
timeout 120 ncu --kernel-name regex:line_pass --launch-skip 2 --launch-count 1 --section SourceCounters \
  --page source --print-source sass --csv \
  .gpu/halconv_bench --report separable --sizes 4096 --kernels 63 --max-ms 1 > $OUT/ncu-sass.csv 2>&1
date -u >> $OUT/device.txt
cd $OUT && gzip -9 ncu-sass.csv; tar czf ../r.tgz . && rm -rf ./* && mv ../r.tgz .
