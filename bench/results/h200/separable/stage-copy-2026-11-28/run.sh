#!/usr/bin/env bash
cd "$(dirname "$0")/.."
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv > $OUT/device.txt
export HALCONV_WISDOM=/nonexistent HALCONV_CLI=$PWD/.gpu/halconv HALCONV_DATA_DIR=$PWD/data
F='*Separable*:*GaussianBlur*:*Sliding*:LowRank*:CudaGridLimits*:PlanGpu*:RegistryLimits*:*Auto*:Cli*:*Edges*:*Unsharp*:*Fft*:*fft*:*ConvMatrix*'
X='PlanGpuStreams.AutomaticBandsWhenTheDeviceIsFull:PlanGpuStreams.DeviceResidentImagesBeyondTheOneShotLimitRunInBands'
{
for s in 0 1 2 3 4 5 6 7; do GTEST_TOTAL_SHARDS=8 GTEST_SHARD_INDEX=$s .gpu/halconv_tests --gtest_brief=1 --gtest_filter="$F-$X" > $OUT/t$s.log 2>&1 & done; wait
.gpu/halconv_tests --gtest_brief=1 --gtest_filter="$X" > $OUT/t8.log 2>&1
} 
cat $OUT/t?.log > $OUT/tests.log; rm $OUT/t?.log
grep -hE "PASSED|FAILED|SKIPPED \[|tests ran" $OUT/tests.log | sort | uniq -c | head -20
compute-sanitizer --tool memcheck --error-exitcode 3 .gpu/halconv_tests --gtest_brief=1 --gtest_filter='*CudaSeparable*/f32:*CudaSeparable*/f16f32:*CudaSeparable*/f16' > $OUT/memcheck.log 2>&1; echo "memcheck rc=$?"
compute-sanitizer --tool racecheck --error-exitcode 3 .gpu/halconv_tests --gtest_brief=1 --gtest_filter='*CudaSeparable*SlidingPassMatches*/f32' > $OUT/racecheck.log 2>&1; echo "racecheck rc=$?"
{
for rep in 1 2; do
for size in 4096 8192; do
for k in 3 7 15 21 31 63 127; do
  echo "== size $size K $k rep $rep"
  echo -n "old "; .gpu/probe_old $k $size cuda-cores
  echo -n "new "; .gpu/probe_new $k $size cuda-cores
  echo -n "lb4 "; .gpu/probe_lb4 $k $size cuda-cores
done; done; done
} > $OUT/times.txt 2>&1
.gpu/halconv_bench --report separable --sizes 4096,8192,3840x2160 --csv $OUT/separable.csv > $OUT/separable.log 2>&1
.gpu/halconv_bench --report pipelines --sizes 4096,8192,3840x2160 --csv $OUT/pipelines.csv > $OUT/pipelines.log 2>&1
cd $OUT && tar czf ../r.tgz . && rm -rf ./* && mv ../r.tgz .
