export HALCONV_WISDOM=/nonexistent
nvidia-smi --query-gpu=name,driver_version --format=csv > $OUT/device.txt; date -u >> $OUT/device.txt
for i in 0 1 2 3; do GTEST_TOTAL_SHARDS=4 GTEST_SHARD_INDEX=$i timeout 120 .gpu/halconv_tests --gtest_brief=1 --gtest_filter='*Recursive*:GaussianBlur*:PlanGpu*Recursive*' > $OUT/tests-$i.log 2>&1 & done; wait
grep -h -E "tests from .* ran|^\[  (PASSED|FAILED) +\]|^\[  SKIPPED \] [0-9]" $OUT/tests-*.log | sort | uniq -c; grep -h -E "Actual|:119:|FAILED  \]" $OUT/tests-*.log | head -20
timeout 60 compute-sanitizer --tool memcheck --error-exitcode 9 .gpu/halconv_tests --gtest_brief=1 --gtest_filter='Cuda/RecursiveGaussian.LinesAcrossBlocks/f32:Cuda/RecursiveGaussian.PlanApplies*/f32' > $OUT/memcheck.log 2>&1; echo "memcheck rc=$?"; tail -1 $OUT/memcheck.log
timeout 60 compute-sanitizer --tool racecheck --error-exitcode 9 .gpu/halconv_tests --gtest_brief=1 --gtest_filter='Cuda/RecursiveGaussian.LinesAcrossBlocks/f32' > $OUT/racecheck.log 2>&1; echo "racecheck rc=$?"; tail -1 $OUT/racecheck.log
for v in old new old new; do B=.gpu/halconv_bench; [ $v = old ] && B=.gpu/halconv_bench_old; echo "== $v"; timeout 50 $B --report recursive --sizes 4096,3840x2160 2>&1 | grep "^recursive"; done > $OUT/recursive-old-new.txt
date -u >> $OUT/device.txt
grep -A13 "== new" $OUT/recursive-old-new.txt | tail -13; grep -A13 "== old" $OUT/recursive-old-new.txt | tail -13
