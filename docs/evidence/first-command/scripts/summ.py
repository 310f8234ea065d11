import sys, collections, re
# .ninja_log: start end mtime output hash ; sums step wall ms per stage and lists the largest steps
rows=[l.split('\t') for l in open(sys.argv[1]) if not l.startswith('#')]
per=collections.Counter(); n=collections.Counter(); steps=[]
for r in rows:
    d=(int(r[1])-int(r[0]))/1000; out=r[3]
    m=re.search(r'sightline_(\w+)\.dir',out) or re.search(r'(sightline)\.dir',out)
    st=m.group(1) if m else ('link/other')
    if out.endswith('.o'): per[st]+=d; n[st]+=1
    steps.append((d,out))
print('steps', len(rows), 'sum of step wall seconds %.0f'%sum(d for d,_ in steps))
print('compile steps per stage (count, sum of wall s):')
for k,v in per.most_common(): print('  %-12s %3d %7.0f'%(k,n[k],v))
print('largest steps (wall s):')
for d,o in sorted(steps,reverse=True)[:15]: print('  %6.1f %s'%(d,o))
