#!/bin/bash
cd "$(dirname "$0")/.."
nvidia-smi --query-gpu=name,driver_version --format=csv > $OUT/device.txt
{ for k in 15 63 127; do
  echo "== row form 5 K $k"; FORM=5 MB=$([ $k = 127 ] && echo 2 || echo 3) .gpu/wgmma_row $k 2>&1 | grep -v "^  ("
  echo "== column K $k"; MB=2 N=64 .gpu/wgmma_column $k 2>&1 | grep -v "^  ("
done; echo "== row form 6 K 15"; FORM=6 MB=2 TILES=32 .gpu/wgmma_row 15 2>&1 | grep -v "^  ("; } > $OUT/after-common-fragments.txt 2>&1
grep -E "==|best|outside" $OUT/after-common-fragments.txt
cd $OUT && tar czf ../r.tgz . && rm -rf ./* && mv ../r.tgz .
