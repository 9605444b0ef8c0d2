#!/usr/bin/env bash
# Device call 3 (2026-11-29): the lead folded into the arguments (base, reach), so that the
# loops read one field as before: the passes' tests, memcheck on the alignment and non-finite
# tests, the separable report of 49fa768 (halconv_bench_old) and of this build alternated,
# twice; the pipelines report.
cd "$(dirname "$0")/.."
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv > $OUT/device.txt; date -u >> $OUT/device.txt
export HALCONV_WISDOM=/nonexistent HALCONV_DATA_DIR=$PWD/data
timeout 150 .gpu/halconv_tests --gtest_filter='CudaSeparableTensorCore*:SeparableTensorCoreRule*' > $OUT/tc-tests.log 2>&1; echo "rc=$?" >> $OUT/tc-tests.log
timeout 120 /usr/local/cuda/bin/compute-sanitizer --tool memcheck .gpu/halconv_tests --gtest_brief=1 \
  --gtest_filter='CudaSeparableTensorCore.AlignsTiles*:CudaSeparableTensorCore.KeepsNonFinite*' > $OUT/memcheck.log 2>&1; echo "rc=$?" >> $OUT/memcheck.log
date -u >> $OUT/device.txt
K=31,43,47,63,79,127,143,151,157,161,193
for r in 1 2; do for b in old new; do
  exe=.gpu/halconv_bench; [ $b = old ] && exe=.gpu/halconv_bench_old
  timeout 100 $exe --report separable --max-ms 1 --sizes 4096,8192,3840x2160 --kernels $K > $OUT/separable-$b-$r.log 2>&1
done; done
date -u >> $OUT/device.txt
export HALCONV_CLI=$PWD/.gpu/halconv
timeout 120 .gpu/halconv_bench --report pipelines --sizes 4096,8192,3840x2160 --csv $OUT/pipelines.csv > $OUT/pipelines.log 2>&1; echo "rc=$?" >> $OUT/pipelines.log
date -u >> $OUT/device.txt
cd $OUT && tar czf ../r.tgz . && rm -rf ./* && mv ../r.tgz .
