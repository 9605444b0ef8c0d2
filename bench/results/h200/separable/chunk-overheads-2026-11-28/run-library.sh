#!/usr/bin/env bash
# The library call (2026-11-28 15:19-15:23 UTC, device tool, nvidia-h200): .gpu/halconv_tests,
# halconv_bench and halconv (CLI) built with this change (scripts/configure build
# -DHALCONV_WITH_CUDA=ON -DHALCONV_SANITIZED_TESTS=OFF -DHALCONV_CPU_TARGETS=x86-64-linux),
# .gpu/halconv_bench_old the same build of fc8d38c, .gpu/crossover_probe
# (bench/probes/separable_crossover_probe.cpp) linked against this change's library.
# Run as: tar xJf .gpu.tar.xz && bash .gpu/run.sh
cd "$(dirname "$0")/.."
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv > $OUT/device.txt; date -u >> $OUT/device.txt
export HALCONV_WISDOM=/nonexistent HALCONV_CLI=$PWD/.gpu/halconv HALCONV_DATA_DIR=$PWD/data
F='*Separable*:*GaussianBlur*:*Sliding*:LowRank*:CudaGridLimits*:PlanGpu*:RegistryLimits*:*Auto*:Cli*:*Edges*:*Unsharp*:*Fft*:*fft*:*ConvMatrix*'
X='PlanGpuStreams.AutomaticBandsWhenTheDeviceIsFull:PlanGpuStreams.DeviceResidentImagesBeyondTheOneShotLimitRunInBands'
for s in 0 1 2 3 4 5 6 7; do GTEST_TOTAL_SHARDS=8 GTEST_SHARD_INDEX=$s .gpu/halconv_tests --gtest_brief=1 --gtest_filter="$F-$X" > $OUT/t$s.log 2>&1 & done; wait
.gpu/halconv_tests --gtest_brief=1 --gtest_filter="$X" > $OUT/t8.log 2>&1
cat $OUT/t?.log > $OUT/tests.log; rm $OUT/t?.log
compute-sanitizer --tool memcheck --error-exitcode 3 .gpu/halconv_tests --gtest_brief=1 --gtest_filter='*CudaSeparable*/f32:*CudaSeparable*/f16f32:*CudaSeparable*/f16' > $OUT/memcheck.log 2>&1; echo "memcheck rc=$?"
compute-sanitizer --tool racecheck --error-exitcode 3 .gpu/halconv_tests --gtest_brief=1 --gtest_filter='*CudaSeparable*SlidingPassMatches*/f32' > $OUT/racecheck.log 2>&1; echo "racecheck rc=$?"
for v in new old new old; do b=.gpu/halconv_bench; [ $v = old ] && b=.gpu/halconv_bench_old
  $b --report separable --sizes 4096,8192,3840x2160 --csv $OUT/separable-$v-$RANDOM.csv > /dev/null 2>&1; done
.gpu/halconv_bench --report pipelines --sizes 4096,8192,3840x2160 --csv $OUT/pipelines.csv > $OUT/pipelines.log 2>&1
P=.gpu/crossover_probe
$P same f32 512x512,1024x1024,2048x2048,3840x2160,4096x4096,8192x8192 > $OUT/same-f32.csv 2>&1
$P valid f32 1024x1024,4096x4096,8192x8192 > $OUT/valid-f32.csv 2>&1
$P same f16f32 512x512,1024x1024,4096x4096 > $OUT/same-f16f32.csv 2>&1
$P same f16 1024x1024,4096x4096 > $OUT/same-f16.csv 2>&1
