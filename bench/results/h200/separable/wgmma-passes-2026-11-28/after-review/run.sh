#!/bin/bash
cd "$(dirname "$0")/.."
nvidia-smi --query-gpu=name,driver_version --format=csv > $OUT/device.txt
{ echo "== row form 1 K 63"; FORM=1 TILES=8 .gpu/wgmma_row 63 2>&1 | grep -v "^  ("
  echo "== row form 1 HOLD K 63"; FORM=1 HOLD=1 TILES=8 .gpu/wgmma_row 63 2>&1 | grep -v "^  ("
  echo "== row form 5 K 63"; FORM=5 MB=3 TILES=8 .gpu/wgmma_row 63 2>&1 | grep -v "^  ("
  echo "== column K 63"; MB=2 N=64 TILES=16 .gpu/wgmma_column 63 2>&1 | grep -v "^  ("
  echo "== sliding probe, f16 parts, shard 0 of 8"; timeout 120 .gpu/sliding_probe check f16 0 8 2>&1 | tail -4
} > $OUT/after-review.txt 2>&1
cat $OUT/after-review.txt | grep -E "==|best|outside|fail|pass|cases" | head -30
cd $OUT && tar czf ../r.tgz . && rm -rf ./* && mv ../r.tgz .
