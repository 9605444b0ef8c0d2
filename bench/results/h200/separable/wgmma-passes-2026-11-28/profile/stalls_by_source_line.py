#!/usr/bin/env python3
"""Warp stall samples (and instructions) by CUDA source line from an Nsight Compute source
export (ncu --section SourceCounters --page source --print-source cuda,sass --csv): each
SASS instruction counted once, under the least-executed of the inlined lines it is listed
under (the innermost), with its top stall reasons.
Usage: stalls_by_source_line.py src.csv [LINES]"""
import collections
import csv
import sys

rows = list(csv.reader(open(sys.argv[1])))
cur_file = None
line = None
src = {}
addr_lines = collections.defaultdict(set)
addr_n, addr_s, addr_why = {}, {}, {}
for r in rows:
    if r and r[0] == 'File Path':
        cur_file = r[1].split('/')[-1]
        continue
    if r and r[0] == 'Line No':
        head = r
        ei = r.index('Instructions Executed')
        si = r.index('Warp Stall Sampling (All Samples)')
        reasons = [(i, h) for i, h in enumerate(r) if h.startswith('stall_') and '(Not Issued)' not in h]
        continue
    if r and r[0] == 'Function Name':
        continue
    if len(r) > 4 and r[0] and r[2] == '-':
        line = (cur_file, int(r[0]))
        src[line] = r[1]
    elif len(r) > 4 and not r[0] and r[2].startswith('0x'):
        num = lambda v: int(float(v.replace(',', '') or 0))
        addr_lines[r[2]].add(line)
        addr_n[r[2]] = num(r[ei])
        addr_s[r[2]] = num(r[si])
        addr_why[r[2]] = {h[6:]: num(r[i]) for i, h in reasons}
linecount = collections.Counter()
for a, ls in addr_lines.items():
    for l in ls:
        linecount[l] += addr_n[a]
per_s, per_n = collections.Counter(), collections.Counter()
why = collections.defaultdict(collections.Counter)
for a, ls in addr_lines.items():
    l = min(ls, key=lambda l: (linecount[l], l))
    per_s[l] += addr_s[a]
    per_n[l] += addr_n[a]
    why[l].update(addr_why[a])
ts, tn = sum(per_s.values()), sum(per_n.values())
print(sys.argv[1], 'stall samples', ts, 'warp instructions', tn)
for l, s in sorted(per_s.items(), key=lambda x: -x[1])[:int(sys.argv[2]) if len(sys.argv) > 2 else 30]:
    top = ' '.join('%s:%d%%' % (k, 100 * v // max(s, 1)) for k, v in why[l].most_common(3))
    print('%-40s %5.1f%% samples %5.1f%% instr  %-40s %s' % ('%s:%d' % l, 100 * s / ts, 100 * per_n[l] / tn, top[:40],
                                                            src[l].strip()[:50]))
