#!/bin/bash
cd "$(dirname "$0")/.."
nvidia-smi --query-gpu=name,driver_version --format=csv > $OUT/device.txt
for k in 15 31 63 95 127; do for cfg in "1 64" "2 64" "1 128"; do set -- $cfg
  echo "== K $k MB $1 N $2"; MB=$1 N=$2 timeout 90 .gpu/wgmma_column $k 2>&1 | grep -v "^  (" ; done; done > $OUT/column-factors.txt 2>&1
echo "== 8192 K 63 MB 1 N 128" >> $OUT/column-factors.txt; MB=1 N=128 .gpu/wgmma_column 63 8192 8192 2>&1 | grep -v "^  (" >> $OUT/column-factors.txt
grep -E "==|best|outside|past|rror|tensor map" $OUT/column-factors.txt
cd $OUT && tar czf ../r.tgz . && rm -rf ./* && mv ../r.tgz .
