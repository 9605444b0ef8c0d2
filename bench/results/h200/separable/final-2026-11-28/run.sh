export HALCONV_WISDOM=/nonexistent HALCONV_CLI=$PWD/.gpu/halconv HALCONV_DATA_DIR=$PWD/data
nvidia-smi --query-gpu=name,driver_version --format=csv > $OUT/device.txt; date -u >> $OUT/device.txt
mkdir -p $OUT/r
HOG='PlanGpuStreams.AutomaticBandsWhenTheDeviceIsFull:PlanGpuStreams.DeviceResidentImagesBeyondTheOneShotLimitRunInBands'
for i in 0 1 2 3 4 5 6 7; do GTEST_TOTAL_SHARDS=8 GTEST_SHARD_INDEX=$i timeout 400 .gpu/halconv_tests --gtest_brief=1 --gtest_filter="-$HOG" > $OUT/r/tests-$i.log 2>&1 & done
wait
timeout 120 .gpu/halconv_tests --gtest_brief=1 --gtest_filter="$HOG" > $OUT/r/tests-hog.log 2>&1
date -u >> $OUT/device.txt
grep -h -E "tests from .* ran|^\[  (PASSED|FAILED) +\]|^\[  SKIPPED \] [0-9]" $OUT/r/tests-*.log | sort | uniq -c
grep -h "FAILED  \]" $OUT/r/tests-*.log | sort | uniq | head -20
timeout 90 .gpu/halconv_bench --report separable --sizes 1024,4096,8192,3840x2160 --csv $OUT/r/separable.csv > $OUT/r/separable.log 2>&1
timeout 90 .gpu/halconv_bench --report pipelines --sizes 1024,4096,8192,3840x2160 --csv $OUT/r/pipelines.csv > $OUT/r/pipelines.log 2>&1
grep halconv_separable $OUT/r/separable.log; grep -E "gaussian|edges_fused" $OUT/r/pipelines.log
date -u >> $OUT/device.txt
tar -C $OUT -cJf $OUT/r.tar.xz r && rm -rf $OUT/r
