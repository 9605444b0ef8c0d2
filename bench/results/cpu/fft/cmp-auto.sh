#!/bin/bash
# Alternates halconv's default call (bench-quick's auto row: plans, resident data, mode
# same, reflect) and OpenCV's filter2D, 3 rounds; min per K.
# PYTHON: a Python with numpy, scipy and opencv-python-headless (bench/cpu_peers.py).
set -e
root=$(git rev-parse --show-toplevel)
K=${K:-1,3,5,7,9,11,13,15}
tmp=$(mktemp -d)
for r in 1 2 3; do
  HL_NUM_THREADS=2 $root/build/tools/halconv bench-quick --device cpu --sizes 2048 --kernels $K --reps 5 | grep '^auto ' > $tmp/hc-$r.txt
  ${PYTHON:-python3} $root/bench/cpu_peers.py --sizes 2048 --kernels $K --threads 2 --reps 5 --direct-max-k 0 2>/dev/null | grep filter2D > $tmp/cv-$r.txt
done
python3 - $tmp <<'P'
import collections,sys
d=sys.argv[1]
h=collections.defaultdict(list); c=collections.defaultdict(list)
for r in (1,2,3):
    for line in open(f'{d}/hc-{r}.txt'):
        p=line.split(); h[int(p[3])].append(float(p[4]))
    for line in open(f'{d}/cv-{r}.txt'):
        p=line.split(); c[int(p[-2])].append(float(p[-1]))
for k in sorted(h):
    print(f"K={k:3d} auto min {min(h[k]):6.2f}  all {' '.join('%.2f'%x for x in h[k])} | filter2D min {min(c[k]):6.2f} all {' '.join('%.2f'%x for x in c[k])} | ratio {min(h[k])/min(c[k]):.2f}")
P
rm -rf $tmp
