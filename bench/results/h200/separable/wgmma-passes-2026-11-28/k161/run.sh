#!/bin/bash
cd "$(dirname "$0")/.."
nvidia-smi --query-gpu=name,driver_version --format=csv > $OUT/device.txt
{ for mb in 1 2; do echo "== row form 5 K 161 MB $mb"; FORM=5 MB=$mb timeout 120 .gpu/wgmma_row 161 2>&1 | grep -v "^  ("; done
  for cfg in "1 64" "1 128"; do set -- $cfg; echo "== column K 161 MB $1 N $2"; MB=$1 N=$2 timeout 120 .gpu/wgmma_column 161 2>&1 | grep -v "^  ("; done
} > $OUT/k161.txt 2>&1
grep -E "==|best|outside|past|holds" $OUT/k161.txt
cd $OUT && tar czf ../r.tgz . && rm -rf ./* && mv ../r.tgz .
