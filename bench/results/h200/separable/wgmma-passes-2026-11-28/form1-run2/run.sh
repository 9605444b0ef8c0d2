#!/bin/bash
cd "$(dirname "$0")/.."
nvidia-smi --query-gpu=name,driver_version --format=csv > $OUT/device.txt
for k in 15 63 127; do for m in 0 1 2; do echo "== K $k MODE $m"; MODE=$m TILES=8 .gpu/wgmma_row $k | grep -v check; done; done > $OUT/modes.txt 2>&1
for k in 15 31 63; do echo "== K $k HOLD"; HOLD=1 .gpu/wgmma_row $k; done > $OUT/hold.txt 2>&1
cat $OUT/*.txt
cd $OUT && tar czf ../r.tgz . && rm -rf ./* && mv ../r.tgz .
