# Samples per time window and thread, with each window's top leaf symbols and first user frames.
import sys, collections, re
samples = []; cur = None
for line in sys.stdin:
    line = line.rstrip('\n')
    if not line.strip():
        if cur: samples.append(cur)
        cur = None; continue
    if not line.startswith(('\t', ' ')):
        m = re.match(r'\s*(\S+)\s+(\d+)\s+([\d.]+):', line)
        cur = [m.group(1) + '/' + m.group(2), float(m.group(3)), []]
    else:
        parts = line.strip().split(None, 1)
        cur[2].append(parts[1] if len(parts) > 1 else '')
if cur: samples.append(cur)
t0 = samples[0][1]
cuts = [float(x) for x in sys.argv[1:]]
def win(t):
    for i, c in enumerate(cuts):
        if t < c: return i
    return len(cuts)
W = collections.defaultdict(list)
for s in samples: W[win(s[1] - t0)].append(s)
kern = ('clear_', 'asm_', 'exc_', 'handle_', '__handle', 'do_', 'pvm', '__raw', 'alloc_', 'vma_', '__alloc', 'get_page', '__folio', 'folio', 'clear_huge', 'clear_subpage', 'process_huge', '[unknown]', '__do', 'handle_mm', 'std::', '__gnu', '__memset', '__memcpy', 'operator new', 'sysmalloc', '_int_malloc', '__GI_', 'malloc', 'sightline::(anonymous namespace)::Permute')
print('span %.2f s, %d samples' % (samples[-1][1] - t0, len(samples)))
for w in sorted(W):
    S = W[w]
    lo = 0 if w == 0 else cuts[w-1]; hi = cuts[w] if w < len(cuts) else samples[-1][1] - t0
    th = collections.Counter(s[0] for s in S)
    leaf = collections.Counter(s[2][0] if s[2] else '?' for s in S)
    owner = collections.Counter()
    for s in S:
        u = [f for f in s[2] if not f.startswith(kern)]
        owner[(u[0] if u else '?')[:90]] += 1
    print(f'\n== {lo:.2f}-{hi:.2f} s: {len(S)} samples ({len(S)/max(hi-lo,1e-9)/250:.2f} cores busy); threads: ' + ', '.join(f'{k} {v}' for k, v in th.most_common(4)))
    print('  leaf: ' + '; '.join(f'{k[:50]} {v}' for k, v in leaf.most_common(8)))
    print('  owner (first own frame):')
    for k, v in owner.most_common(14): print(f'    {v:5d} {k}')
