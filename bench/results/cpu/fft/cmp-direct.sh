#!/bin/bash
# Alternates halconv (plans, resident data) and OpenCV, 3 rounds; min per K.
# PYTHON: a Python with numpy, scipy and opencv-python-headless (bench/cpu_peers.py).
root=$(git rev-parse --show-toplevel)
K=${K:-3,5,7,9,11,13}
rm -f /tmp/cmp-[123].json /tmp/cmp-cv-[123].txt
for r in 1 2 3; do
  HL_NUM_THREADS=2 $root/build/tools/halconv tune --device cpu --sizes 2048 --kernels $K --precisions f32 --modes same --algorithms ${ALGS:-shared_tiled} --reps 5 --max-ms 1000 --output /tmp/cmp-$r.json --quiet >/dev/null 2>&1
  ${PYTHON:-python3} $root/bench/cpu_peers.py --sizes 2048 --kernels $K --threads 2 --reps 5 --direct-max-k 0 2>/dev/null | grep filter2D > /tmp/cmp-cv-$r.txt
done
python3 - <<'P'
import json,collections
h=collections.defaultdict(list); c=collections.defaultdict(list)
for r in (1,2,3):
    for m in json.load(open(f'/tmp/cmp-{r}.json'))['sections'][0]['measurements']:
        h[(m['algorithm'],m['kernel'][0])].append(m['ms'])
    for line in open(f'/tmp/cmp-cv-{r}.txt'):
        p=line.split(); c[int(p[-2])].append(float(p[-1]))
for (a,k),v in sorted(h.items(), key=lambda z:(z[0][1],z[0][0])):
    print(f"K={k:3d} {a:14s} min {min(v):7.2f}  all {' '.join('%.2f'%x for x in v)} | filter2D min {min(c[k]):6.2f} all {' '.join('%.2f'%x for x in c[k])}")
P
