export HALCONV_WISDOM=/nonexistent HALCONV_CLI=$PWD/.gpu/halconv
nvidia-smi --query-gpu=name,driver_version --format=csv > $OUT/device.txt; date -u >> $OUT/device.txt
mkdir -p $OUT/r
F='*Separable*:*GaussianBlur*:*Sliding*:LowRank*:CudaGridLimits*:PlanGpu*:RegistryLimits*:*Auto*:Cli*:*Edges*:*Unsharp*:*Fft*:*fft*'
for i in 0 1 2 3 4 5 6 7; do GTEST_TOTAL_SHARDS=8 GTEST_SHARD_INDEX=$i timeout 200 .gpu/halconv_tests --gtest_brief=1 --gtest_filter="$F" > $OUT/r/tests-$i.log 2>&1 & done
wait
grep -h -E "tests from .* ran|^\[  (PASSED|FAILED) +\]|^\[  SKIPPED \] [0-9]" $OUT/r/tests-*.log | sort | uniq -c
grep -h "FAILED  \]" $OUT/r/tests-*.log | head
timeout 150 compute-sanitizer --tool memcheck --error-exitcode 9 .gpu/halconv_tests --gtest_brief=1 --gtest_filter='*CudaSeparable*/f32:*CudaSeparable*/f16f32' > $OUT/r/memcheck.log 2>&1; echo "memcheck rc=$?"; tail -3 $OUT/r/memcheck.log
timeout 60 compute-sanitizer --tool racecheck --error-exitcode 9 .gpu/halconv_tests --gtest_brief=1 --gtest_filter='*CudaSeparable*SlidingPassMatches*/f32' > $OUT/r/racecheck.log 2>&1; echo "racecheck rc=$?"; tail -2 $OUT/r/racecheck.log
date -u >> $OUT/device.txt
timeout 100 .gpu/halconv_bench --report separable --sizes 4096,8192,3840x2160 --csv $OUT/r/separable.csv > $OUT/r/separable.log 2>&1
timeout 80 .gpu/halconv_bench --report pipelines --sizes 4096,8192,3840x2160 --csv $OUT/r/pipelines.csv > $OUT/r/pipelines.log 2>&1
timeout 90 .gpu/crossover_probe same f32 4096x4096,1024x1024,3840x2160,8192x8192 63x63,71x71,79x79,87x87,95x95,111x111,127x127,127x31,151x31 > $OUT/r/crossover.csv 2>&1
date -u >> $OUT/device.txt
tar -C $OUT -cJf $OUT/r.tar.xz r && rm -rf $OUT/r
