# Heuristic: names defined at the top level of anonymous namespaces / file-static in each .cc,
# and which of them appear in two files of the same stage folder.
import re, sys, os, collections
root = sys.argv[1]
def strip(src):
    src = re.sub(r'//[^\n]*', '', src)
    src = re.sub(r'/\*.*?\*/', '', src, flags=re.S)
    src = re.sub(r'"(\\.|[^"\\])*"', '""', src)
    src = re.sub(r"'(\\.|[^'\\])*'", "''", src)
    return src
def names(path):
    s = strip(open(path).read())
    out = set()
    # walk, tracking anon-namespace depth
    i = 0; depth = 0; anon_depths = []; stmt = ''
    while i < len(s):
        c = s[i]
        if c == '{':
            m = re.search(r'namespace\s*$', stmt)
            if m: anon_depths.append(depth + 1)
            if anon_depths and depth == anon_depths[-1] or (not anon_depths and depth <= 3 and re.search(r'\bstatic\b', stmt)):
                collect(stmt, out)
            depth += 1; stmt = ''
        elif c == '}':
            if anon_depths and anon_depths[-1] == depth: anon_depths.pop()
            depth -= 1; stmt = ''
        elif c == ';':
            if anon_depths and depth == anon_depths[-1] or (not anon_depths and re.search(r'^\s*static\b', stmt) and depth <= 3):
                collect(stmt, out)
            stmt = ''
        else:
            stmt += c
        i += 1
    return out
def collect(stmt, out):
    st = ' '.join(stmt.split())
    if st.startswith('using namespace'): return
    m = re.match(r'^(template\s*<.*?>\s*)?(struct|class|enum class|enum|union)\s+(\w+)', st)
    if m: out.add(m.group(3)); return
    m = re.match(r'^using\s+(\w+)\s*=', st)
    if m: out.add(m.group(1)); return
    m = re.search(r'(\w+)\s*\(', st)
    if m and '=' not in st.split('(')[0]: out.add(m.group(1)); return
    m = re.search(r'(\w+)\s*(\[[^\]]*\])?\s*(=|\{|$)', st)
    if m: out.add(m.group(1))
stages = collections.defaultdict(list)
for dp, dn, fn in os.walk(root):
    for f in fn:
        if f.endswith('.cc'):
            rel = os.path.relpath(os.path.join(dp, f), root)
            stages[rel.split('/')[0]].append(rel)
for st, files in sorted(stages.items()):
    seen = collections.defaultdict(list)
    for f in sorted(files):
        for n in names(os.path.join(root, f)):
            seen[n].append(f)
    for n, fs in sorted(seen.items()):
        if len(fs) > 1 and n not in ('if','for','while','switch','return','sizeof','decltype','static_assert'):
            print(f'{st}: {n}: {" ".join(fs)}')
