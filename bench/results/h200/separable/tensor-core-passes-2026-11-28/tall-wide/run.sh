#!/usr/bin/env bash
# The tensor-core passes' tests with the very tall and very wide images added (2026-11-28).
cd "$(dirname "$0")/.."
export HALCONV_WISDOM=/nonexistent
nvidia-smi --query-gpu=name,driver_version --format=csv > $OUT/device.txt 2>&1
timeout 200 .gpu/halconv_tests --gtest_filter='CudaSeparableTensorCore*' > $OUT/tc-tests.log 2>&1
echo "rc=$?" >> $OUT/tc-tests.log
cd $OUT && tar czf ../r.tgz . && rm -rf ./* && mv ../r.tgz .
