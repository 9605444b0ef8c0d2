#!/bin/bash
cd "$(dirname "$0")/.."
nvidia-smi --query-gpu=name,driver_version --format=csv > $OUT/device.txt
for k in 15 63 127; do
  echo "== form 1 K $k"; FORM=1 TILES=8 .gpu/wgmma_row $k 2>&1 | grep -v "^  ("
  echo "== form 2 K $k"; FORM=2 MB=4 N=64 TILES=4 .gpu/wgmma_row $k 2>&1 | grep -v "^  ("
  echo "== form 2 WG 2 K $k"; FORM=2 WG=2 MB=2 TILES=8 .gpu/wgmma_row $k 2>&1 | grep -v "^  ("
  echo "== form 3 K $k"; FORM=3 MB=1 TILES=16 .gpu/wgmma_row $k 2>&1 | grep -v "^  ("
  echo "== form 4 K $k"; FORM=4 N=32 MB=2 TILES=32 .gpu/wgmma_row $k 2>&1 | grep -v "^  ("
  echo "== form 5 K $k"; FORM=5 MB=$([ $k = 127 ] && echo 2 || echo 3) .gpu/wgmma_row $k 2>&1 | grep -v "^  ("
  echo "== form 6 K $k"; FORM=6 MB=$([ $k = 127 ] && echo 1 || echo 2) TILES=32 .gpu/wgmma_row $k 2>&1 | grep -v "^  ("
done > $OUT/refactored.txt 2>&1
grep -E "==|best|outside|past" $OUT/refactored.txt
cd $OUT && tar czf ../r.tgz . && rm -rf ./* && mv ../r.tgz .
