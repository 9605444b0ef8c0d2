#!/usr/bin/env bash
# Device call 9 (2026-11-29, thirteenth session): the Toeplitz fragments gathered with the
# flip in a pointer and step and one unsigned bounds test (the prologue 28-32 % fewer
# instructions; ptxas: no wgmma serialization): a smoke test, the passes' and Gaussian tests,
# then the separable report of 71e175e's kernel (halconv_bench_old) and of this one,
# alternated twice.
cd "$(dirname "$0")/../../../../../.."
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv > $OUT/device.txt; date -u >> $OUT/device.txt
export HALCONV_WISDOM=/nonexistent HALCONV_DATA_DIR=$PWD/data
timeout 40 .gpu/halconv_tests --gtest_filter='CudaSeparableTensorCore.AlignsTilesAtEveryOffset' > $OUT/smoke.log 2>&1; rc=$?; echo "rc=$rc" >> $OUT/smoke.log
if [ $rc -ne 0 ]; then cd $OUT && tar czf ../r.tgz . && rm -rf ./* && mv ../r.tgz .; exit 0; fi
timeout 100 .gpu/halconv_tests --gtest_filter='CudaSeparableTensorCore*:SeparableTensorCoreRule*:*GaussianBlur*' > $OUT/tc-tests.log 2>&1; echo "rc=$?" >> $OUT/tc-tests.log
date -u >> $OUT/device.txt
for r in 1 2; do for b in old new; do
  exe=.gpu/halconv_bench; [ $b = old ] && exe=.gpu/halconv_bench_old
  timeout 30 $exe --report separable --max-ms 1 --sizes 4096,8192 --kernels 35,63,127,193 > $OUT/separable-$b-$r.log 2>&1
done; done
date -u >> $OUT/device.txt
cd $OUT && tar czf ../r.tgz . && rm -rf ./* && mv ../r.tgz .
