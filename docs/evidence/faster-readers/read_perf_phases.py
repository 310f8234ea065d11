# Classifies perf samples (perf script -F tid,time,ip,sym) by phase: import scan/builder, Finish, analyses.
import sys, collections, re
samples = []
cur = None
for line in sys.stdin:
    line = line.rstrip('\n')
    if not line.strip():
        if cur: samples.append(cur)
        cur = None
        continue
    if not line.startswith('\t') and not line.startswith(' '):
        m = re.match(r'\s*(\d+)\s+([\d.]+):', line)
        cur = [int(m.group(1)), float(m.group(2)), []]
    else:
        parts = line.strip().split(None, 1)
        cur[2].append(parts[1] if len(parts) > 1 else '')
if cur: samples.append(cur)
def phase(st):
    s = ' '.join(st)
    if 'RunWorker' in s or 'ScanSqlitePages' in s or 'TableWalk' in s: return 'scan-worker'
    if 'TraceBuilder::Finish' in s: return 'finish'
    if 'ImportNsysSqlite' in s or 'ImportMappedNsysSqlite' in s or 'NsysParallelScan::Run' in s: return 'import-main'
    if 'main' in s and ('Import' in s or 'OpenInput' in s): return 'import-other'
    return 'other'
t0 = samples[0][1]
ph = collections.defaultdict(lambda: [0, 1e9, 0, collections.Counter()])
for tid, t, st in samples:
    p = phase(st)
    e = ph[p]; e[0] += 1; e[1] = min(e[1], t - t0); e[2] = max(e[2], t - t0); e[3][st[0] if st else '?'] += 1
print('total samples', len(samples), 'span %.2f s' % (samples[-1][1] - t0))
for p, (n, a, b, c) in sorted(ph.items(), key=lambda x: x[1][1]):
    print(f'{p:14s} {n:5d} samples  {a:6.2f}..{b:6.2f} s   top: ' + ', '.join(f'{k[:40]} {v}' for k, v in c.most_common(5)))
# clear_page_erms by the first non-kernel frame
cz = collections.Counter()
for tid, t, st in samples:
    if st and st[0] == 'clear_page_erms':
        user = [f for f in st if not f.startswith(('clear_', 'asm_', 'exc_', 'handle_', '__handle', 'do_', 'pvm', '__raw', 'alloc_', 'vma_', '__alloc', 'get_page', '__folio', 'folio', 'clear_huge', 'clear_subpage', 'process_huge', '[unknown]', '__do', 'handle_mm'))]
        cz[' < '.join(user[:3])[:150]] += 1
print('clear_page_erms', sum(cz.values()))
for k, v in cz.most_common(15): print(f'  {v:5d} {k}')
