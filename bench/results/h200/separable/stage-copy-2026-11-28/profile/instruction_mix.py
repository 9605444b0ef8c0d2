import csv,sys,collections
f=sys.argv[1]
rows=list(csv.reader(open(f)))
# find header
h=[i for i,r in enumerate(rows) if r and r[0]=='Address'][0]
hdr=rows[h]; data=rows[h+1:]
ai=hdr.index('Address'); si=hdr.index('Source'); ei=hdr.index('Instructions Executed'); st=hdr.index('Warp Stall Sampling (All Samples)')
lines=[]
for r in data:
    if len(r)<=ei: continue
    try: n=int(r[ei].replace(',','') or 0); s=int(r[st].replace(',','') or 0)
    except: continue
    lines.append((r[ai],r[si].strip(),n,s))
tot=sum(l[2] for l in lines); tots=sum(l[3] for l in lines)
print(f,'total',tot,'stall samples',tots)
op=collections.Counter(); ops=collections.Counter()
for a,s,n,ss in lines:
    o=s.split()[0] if s else '?'
    if o.startswith('@'): o=s.split()[1]
    o=o.split('.')[0]
    op[o]+=n; ops[o]+=ss
for o,n in op.most_common(25): print('%-8s %10d %5.1f%% stalls %5.1f%%'%(o,n,100*n/tot,100*ops[o]/tots))
# regions: print cumulative by index windows of hot code
if len(sys.argv)>2:
    for i,(a,s,n,ss) in enumerate(lines):
        if n>0: print(i,a,n,ss,s[:70])
