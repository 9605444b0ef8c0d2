#!/usr/bin/env bash
# Device call 8 (2026-11-29, fifteenth session): the adopted form (the producer's 4-byte cp.async
# copies as in cp-async/, the producer back at 56 registers, the consumers' count derived from
# the launch's registers) built in full by scripts/build-gpu-bundle. With little device time
# left: the separable, Gaussian and tensor-core tests, memcheck and racecheck on the
# tensor-core tests whose rows are unaligned, the boundary probe once.
cd "$(dirname "$0")/../../../../.."
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv > $OUT/device.txt; date -u >> $OUT/device.txt
export HALCONV_WISDOM=/nonexistent HALCONV_CLI=$PWD/.gpu/halconv HALCONV_DATA_DIR=$PWD/data
F='*Separable*:*Gaussian*:*TensorCore*'
for s in 0 1 2 3; do GTEST_TOTAL_SHARDS=4 GTEST_SHARD_INDEX=$s timeout 150 .gpu/halconv_tests --gtest_brief=1 --gtest_filter="$F" > $OUT/shard$s.log 2>&1 & done; wait
date -u >> $OUT/device.txt
timeout 60 /usr/local/cuda/bin/compute-sanitizer --tool memcheck --error-exitcode 3 .gpu/halconv_tests --gtest_brief=1 \
  --gtest_filter='CudaSeparableTensorCore.AlignsTiles*:CudaSeparableTensorCore.KeepsNonFinite*' > $OUT/memcheck.log 2>&1; echo "rc=$?" >> $OUT/memcheck.log
timeout 40 /usr/local/cuda/bin/compute-sanitizer --tool racecheck --error-exitcode 3 .gpu/halconv_tests --gtest_brief=1 \
  --gtest_filter='CudaSeparableTensorCore.AlignsTiles*' > $OUT/racecheck.log 2>&1; echo "rc=$?" >> $OUT/racecheck.log
date -u >> $OUT/device.txt
timeout 40 .gpu/tensor_core_boundary_probe 4094x4096,4096x4096,3838x2160 33,63,121 > $OUT/probe.csv 2> $OUT/probe.err
date -u >> $OUT/device.txt
cd $OUT && tar czf ../r.tgz . && rm -rf ./* && mv ../r.tgz .
