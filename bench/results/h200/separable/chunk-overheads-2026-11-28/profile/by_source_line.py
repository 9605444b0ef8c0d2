#!/usr/bin/env python3
"""Warp instructions by CUDA source line from an Nsight Compute source export
(ncu --section SourceCounters --page source --print-source cuda,sass --csv), each SASS
instruction counted once, under the least-executed of the inlined lines it is listed
under (the innermost); with the top four opcodes of each line.
Usage: by_source_line.py src.csv [LINES]"""
import csv,sys,collections
rows=list(csv.reader(open(sys.argv[1])))
cur_file=None; src={}; addr_lines=collections.defaultdict(set); addr_n={}; addr_op={}
for r in rows:
    if r and r[0]=='File Path': cur_file=r[1].split('/')[-1]; continue
    if r and r[0]=='Line No': ei=r.index('Instructions Executed'); continue
    if r and r[0]=='Function Name': continue
    if len(r)>4 and r[0] and r[2]=='-':
        line=(cur_file,int(r[0])); src[line]=r[1]
    elif len(r)>4 and not r[0] and r[2].startswith('0x'):
        try: n=int(r[ei].replace(',','') or 0)
        except: n=0
        addr_lines[r[2]].add(line); addr_n[r[2]]=n; addr_op[r[2]]=r[3].split()
linecount=collections.Counter()
for a,ls in addr_lines.items():
    for l in ls: linecount[l]+=addr_n[a]
per=collections.Counter(); ops=collections.defaultdict(collections.Counter)
for a,ls in addr_lines.items():
    l=min(ls,key=lambda l:(linecount[l],l))
    per[l]+=addr_n[a]
    o=addr_op[a]; o=o[1] if o[0].startswith('@') else o[0]
    ops[l][o.split('.')[0]]+=addr_n[a]
tot=sum(per.values())
print(sys.argv[1],'total',tot)
for line,n in sorted(per.items(), key=lambda x:-x[1])[:int(sys.argv[2]) if len(sys.argv)>2 else 40]:
    top=' '.join('%s:%d'%(o,c//1000) for o,c in ops[line].most_common(4))
    print('%-26s %9d %5.1f%%  %-44s %s'%('%s:%d'%line,n,100*n/tot,top[:44],src[line][:60]))
