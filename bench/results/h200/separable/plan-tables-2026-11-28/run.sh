export HALCONV_WISDOM=/nonexistent HALCONV_CLI=$PWD/.gpu/halconv HALCONV_DATA_DIR=$PWD/data
nvidia-smi --query-gpu=name,driver_version --format=csv > $OUT/device.txt; date -u >> $OUT/device.txt
mkdir -p $OUT/r
F='*Separable*:*GaussianBlur*:PlanGpu*:*Fft*:*fft*:*Sliding*:LowRank*:RegistryLimits*:*Auto*:Cli*:*Band*:*Staging*'
for i in 0 1 2 3 4 5 6 7; do GTEST_TOTAL_SHARDS=8 GTEST_SHARD_INDEX=$i timeout 240 .gpu/halconv_tests --gtest_brief=1 --gtest_filter="$F" > $OUT/r/tests-$i.log 2>&1 & done
wait
grep -h -E "tests from .* ran|^\[  (PASSED|FAILED) +\]|^\[  SKIPPED \] [0-9]" $OUT/r/tests-*.log | sort | uniq -c
grep -h "FAILED  \]" $OUT/r/tests-*.log | head
timeout 200 compute-sanitizer --tool memcheck --error-exitcode 9 .gpu/halconv_tests --gtest_brief=1 --gtest_filter='PlanGpuStreams.*FftLines*:*CudaSeparable*FftLines*/f32:*CudaSeparable*FftLines*/f16f32' > $OUT/r/memcheck.log 2>&1; echo "memcheck rc=$?"; tail -3 $OUT/r/memcheck.log
date -u >> $OUT/device.txt
timeout 120 .gpu/halconv_bench --report separable --sizes 512,1024,2048,4096,3840x2160 --kernels 127,193,255 --csv $OUT/r/separable.csv > $OUT/r/separable.log 2>&1
timeout 100 .gpu/crossover_probe same f32 512x512,1024x1024,2048x2048,4096x4096,3840x2160 127x127,193x193,255x255 > $OUT/r/crossover.csv 2>&1
timeout 80 .gpu/halconv_bench --report pipelines --sizes 1024,4096 --csv $OUT/r/pipelines.csv > $OUT/r/pipelines.log 2>&1
date -u >> $OUT/device.txt
grep -E "halconv_separable" $OUT/r/separable.log; cat $OUT/r/crossover.csv; grep gaussian $OUT/r/pipelines.log
tar -C $OUT -cJf $OUT/r.tar.xz r && rm -rf $OUT/r
