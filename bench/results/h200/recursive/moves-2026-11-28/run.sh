export HALCONV_WISDOM=/nonexistent
nvidia-smi --query-gpu=name,driver_version --format=csv > $OUT/device.txt; date -u >> $OUT/device.txt
for i in 0 1 2 3; do GTEST_TOTAL_SHARDS=4 GTEST_SHARD_INDEX=$i timeout 200 .gpu/halconv_tests --gtest_brief=1 --gtest_filter='*Recursive*:GaussianBlur*:PlanGpu*Recursive*' > $OUT/tests-$i.log 2>&1 & done; wait
grep -h -E "tests from .* ran|^\[  (PASSED|FAILED) +\]|^\[  SKIPPED \] [0-9]" $OUT/tests-*.log | sort | uniq -c; grep -h "FAILED  \]" $OUT/tests-*.log | sort -u
timeout 100 compute-sanitizer --tool memcheck --error-exitcode 9 .gpu/halconv_tests --gtest_brief=1 --gtest_filter='Cuda/RecursiveGaussian.LinesAcrossBlocks/f32:Cuda/RecursiveGaussian.PlanApplies*/f32' > $OUT/memcheck.log 2>&1; echo "memcheck rc=$?"; tail -2 $OUT/memcheck.log
for r in 1 2; do for v in old new; do B=.gpu/halconv_bench; [ $v = old ] && B=.gpu/halconv_bench_old; echo "== $v"; timeout 60 $B --report recursive --sizes 4096,3840x2160 2>&1 | grep "^recursive"; done; done > $OUT/recursive-old-new.txt
date -u >> $OUT/device.txt
cat $OUT/recursive-old-new.txt
