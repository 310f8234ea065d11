#!/usr/bin/env bash
# Gathers the seed corpora of the fuzz targets into DIR (default build-asan/fuzz-seeds), from the
# files the project ships: tests/data, examples (samples and case-study results) and fuzz/seeds.
# Each file is recognised by the readers themselves (fuzz_reader's classify mode: the registry's
# sniffers, as `sightline formats` does), so the seeds follow the registry with no list to keep:
#   DIR/fuzz_reader.<reader>/   the files that reader takes (fuzz_reader, one run per reader)
#   DIR/fuzz_pipeline/          all of them (the front door picks the reader)
#   DIR/fuzz_recorder/          the sightline-recorder files; DIR/fuzz_kineto_json/ the kineto-json ones
#   DIR/fuzz_gpu_metrics_config/  fuzz/seeds/gpu_metrics_config (YAML no reader takes on its own)
#   DIR/fuzz_query_db/, DIR/fuzz_mcp/, DIR/fuzz_check_claims/  fuzz/seeds/query_db, mcp and
#     check_claims (a saved query database, MCP sessions, a report and a text of claims); the
#     query database also in hostile schema shapes (query_db_shapes below)
# Seeds are decompressed and cut down: nsys exports to their first 8 rows per table (StringIds
# included: names whose ids are gone become unknown-string diagnostics) in 512-byte pages;
# the first export that has kernels, NVTX and strings also in hostile schema shapes (views,
# a virtual table, a generated column, triggers, 1 KiB and 64 KiB pages: schema_shapes below);
# recordings to whole records in valid chunks (shrink_slrec: the first 24 KiB, then a few records
# of each type); other files over 64 KiB to their first 64 KiB (text at a line's end). The inputs
# that once crashed a reader (tests/data/fuzz_regressions/<reader or target>/) join that corpus.
# Nothing here is committed; run it again after adding test data.
#   fuzz/gather_seeds.sh [DIR] [FUZZ_READER_BINARY]   (default build-asan/fuzz/fuzz_reader)
set -euo pipefail
cd "$(dirname "$0")/.."
out=${1:-build-asan/fuzz-seeds}
reader_bin=${2:-build-asan/fuzz/fuzz_reader}
if [ ! -x "$reader_bin" ]; then
  echo "gather_seeds.sh: $reader_bin is not built (scripts/fuzz.sh builds it)" >&2
  exit 2
fi
rm -rf "$out"
mkdir -p "$out/fuzz_pipeline" "$out/fuzz_recorder" "$out/fuzz_kineto_json" \
  "$out/fuzz_gpu_metrics_config" "$out/fuzz_nsys_rows"
SIGHTLINE_FUZZ_READER=list "$reader_bin" 2>/dev/null | while read -r r; do
  mkdir -p "$out/fuzz_reader.$r"
done
cp fuzz/seeds/gpu_metrics_config/* "$out/fuzz_gpu_metrics_config/"
for t in query_db mcp check_claims; do
  mkdir -p "$out/fuzz_$t"
  cp fuzz/seeds/$t/* "$out/fuzz_$t/"
done

# Every shipped file, and the reader that takes it ("READER<TAB>PATH"; files no reader takes are
# left out by the classifier). Regressions are added below, by their directory's name.
find tests/data examples fuzz/seeds -type f -size -64M ! -path 'tests/data/fuzz_regressions/*' \
  ! -path 'fuzz/seeds/gpu_metrics_config/*' ! -path 'fuzz/seeds/query_db/*' \
  ! -path 'fuzz/seeds/mcp/*' ! -path 'fuzz/seeds/check_claims/*' -print0 |
  xargs -0 env SIGHTLINE_FUZZ_CLASSIFY=1 "$reader_bin" 2>/dev/null > "$out/classified.tsv"

python3 - "$out" <<'PY'
import gzip, os, shutil, sqlite3, struct, subprocess, sys, zlib
out = sys.argv[1]
LIMIT = 64 * 1024

def plain(path):
    with open(path, 'rb') as f:
        head = f.read(4)
    if head[:2] == b'\x1f\x8b':
        with gzip.open(path, 'rb') as f:
            return f.read()
    if head == b'\x28\xb5\x2f\xfd':
        return subprocess.run(['zstd', '-dc', path], check=True, capture_output=True).stdout
    with open(path, 'rb') as f:
        return f.read()

def shrink_sqlite(data, dst):
    with open(dst, 'wb') as f:
        f.write(data)
    db = sqlite3.connect(dst)
    for (t,) in db.execute("SELECT name FROM sqlite_master WHERE type = 'table'").fetchall():
        if t.startswith('ENUM_'):
            continue  # the enums the kept rows refer to
        try:
            db.execute(f'DELETE FROM "{t}" WHERE rowid NOT IN (SELECT rowid FROM "{t}" LIMIT 8)')
        except sqlite3.OperationalError:
            pass  # a table without rowid: kept whole
    db.commit()
    db.execute('PRAGMA page_size = 512')
    db.execute('VACUUM')
    db.close()

def shrink_slrec(data):
    """A recording cut to whole records in valid chunks: the records up to 24 KiB, then up to 12 of
    each record type from the rest (kernels, ranges, graph nodes, memory: the types a plain cut
    would lose), in their order, repacked into chunks of at most 4 KiB with their counts and CRCs.
    A plain cut at 64 KiB left a chunk whose size does not fit: the reader imported nothing."""
    hdr = struct.unpack_from('<II', data, 8)[1] if len(data) >= 16 else len(data)
    records, pos = [], hdr
    while pos + 16 <= len(data):
        _, size, _, _ = struct.unpack_from('<IIII', data, pos)
        end = min(pos + 16 + size, len(data))
        r = pos + 16
        while r + 8 <= end:
            rtype, body = struct.unpack_from('<HxxI', data, r)
            nxt = r + 8 + body + (8 - (8 + body) % 8) % 8
            if nxt > end:
                break
            records.append((rtype, data[r:nxt]))
            r = nxt
        pos = end
    kept, size, per_type = [], 0, {}
    for rtype, raw in records:
        if size < 24 * 1024:
            kept.append(raw)
            size += len(raw)
        elif per_type.get(rtype, 0) < 12 and len(raw) <= 1024:
            per_type[rtype] = per_type.get(rtype, 0) + 1
            kept.append(raw)
    out, chunk, count = bytearray(data[:hdr]), bytearray(), 0
    def flush():
        out.extend(struct.pack('<IIII', 0x4b4e4843, len(chunk), count, zlib.crc32(chunk)))
        out.extend(chunk)
    for raw in kept:
        if chunk and len(chunk) + len(raw) > 4096:
            flush()
            chunk, count = bytearray(), 0
        chunk.extend(raw)
        count += 1
    if chunk:
        flush()
    return bytes(out)

def cut(data):
    if len(data) <= LIMIT:
        return data
    part = data[:LIMIT]
    binary = b'\0' in part[:4096]
    if not binary and b'\n' in part:
        part = part[:part.rindex(b'\n') + 1]
    return part

def schema_shapes(seed, out_dirs):
    """Variants of one shrunk export in the shapes a hostile file takes (issue 53; each is refused
    or read, never run for ever): its kernel and string tables as endless views over their rows,
    its NVTX table a virtual table, a generated column in the kernel table, triggers on every
    table, and page sizes of 1 KiB and 64 KiB (the 64 KiB one keeps the kernel, API and string
    tables only, so that it stays small); mutations then start from these schemas too."""
    endless = ('ALTER TABLE "{t}" RENAME TO "{t}_rows"; CREATE VIEW "{t}" AS WITH RECURSIVE '
               'c(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM c) SELECT r.* FROM "{t}_rows" r, c')
    shapes = {
        'view_kernels': endless.format(t='CUPTI_ACTIVITY_KIND_KERNEL'),
        'view_strings': endless.format(t='StringIds'),
        'virtual_nvtx': 'ALTER TABLE NVTX_EVENTS RENAME TO NVTX_rows; '
                        'CREATE VIRTUAL TABLE NVTX_EVENTS USING fts5(text)',
        'generated_column': 'ALTER TABLE CUPTI_ACTIVITY_KIND_KERNEL ADD COLUMN g INTEGER '
                            'AS (start + 1)',
        'triggers': 'triggers',
        'page_1024': 'PRAGMA page_size = 1024',
        'page_65536': 'PRAGMA page_size = 65536',
    }
    for shape, sql in shapes.items():
        dst = os.path.join(out_dirs[0], 'schema_' + shape + '.sqlite')
        shutil.copyfile(seed, dst)
        db = sqlite3.connect(os.path.abspath(dst))  # a path, never a URI
        tables = [t for (t,) in db.execute("SELECT name FROM sqlite_master WHERE type = 'table'")]
        if shape == 'triggers':
            sql = ';'.join(f'CREATE TRIGGER "fire_{t}" AFTER INSERT ON "{t}" BEGIN '
                           f'DELETE FROM "{t}"; END' for t in tables)
        if shape == 'page_65536':
            keep = ('META_DATA_EXPORT', 'StringIds', 'CUPTI_ACTIVITY_KIND_KERNEL',
                    'CUPTI_ACTIVITY_KIND_RUNTIME')
            for t in tables:
                if not t.startswith(keep):
                    db.execute(f'DROP TABLE "{t}"')
        try:
            db.executescript(sql)
            db.commit()
            db.execute('VACUUM')
        except sqlite3.Error as e:  # a seed whose schema does not take this shape: no such seed
            print(f'gather_seeds.sh: schema shape {shape} left out: {e}', file=sys.stderr)
            db.close()
            os.remove(dst)
            continue
        db.close()
        for other in out_dirs[1:]:
            shutil.copyfile(dst, os.path.join(other, 'nsys-sqlite_schema_' + shape + '.sqlite'))

n = 0
counts = {}
for line in open(os.path.join(out, 'classified.tsv'), encoding='utf-8', errors='replace'):
    reader, _, path = line.rstrip('\n').partition('\t')
    if not path or not os.path.isdir(os.path.join(out, 'fuzz_reader.' + reader)):
        continue
    n += 1
    name = f'{n}_{os.path.basename(path)}'
    for suffix in ('.gz', '.zst'):
        name = name[:-len(suffix)] if name.endswith(suffix) else name
    dst = os.path.join(out, 'fuzz_reader.' + reader, name)
    data = plain(path)
    if reader == 'nsys-sqlite':
        shrink_sqlite(data, dst)
    elif reader == 'sightline-recorder':
        with open(dst, 'wb') as f:
            f.write(shrink_slrec(data))
    else:
        with open(dst, 'wb') as f:
            f.write(cut(data))
    counts[reader] = counts.get(reader, 0) + 1
    also = {'sightline-recorder': 'fuzz_recorder', 'kineto-json': 'fuzz_kineto_json'}.get(reader)
    for target in ['fuzz_pipeline'] + ([also] if also else []):
        shutil.copyfile(dst, os.path.join(out, target, f'{reader}_{name}'))

# The schema shapes, from the first seed that has the tables they change.
for name in sorted(os.listdir(os.path.join(out, 'fuzz_reader.nsys-sqlite'))):
    path = os.path.join(out, 'fuzz_reader.nsys-sqlite', name)
    db = sqlite3.connect(os.path.abspath(path))
    have = {t for (t,) in db.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
    db.close()
    if {'CUPTI_ACTIVITY_KIND_KERNEL', 'StringIds', 'NVTX_EVENTS'} <= have:
        schema_shapes(path, [os.path.join(out, 'fuzz_reader.nsys-sqlite'),
                             os.path.join(out, 'fuzz_pipeline')])
        break

def query_db_shapes(out_dir):
    """The saved query database seeds in the shapes a hostile file takes, each refused when
    opened or answered with nothing of the file run (docs/query.md): an endless view in place of
    the kernels table, a view beside the tables, an FTS5 virtual table, a generated column, a
    trigger, a table of the schema missing, another schema version; mutations then start from
    these schemas too."""
    endless = ('ALTER TABLE kernels RENAME TO kernel_rows; CREATE VIEW kernels AS WITH RECURSIVE '
               'c(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM c) SELECT r.* FROM kernel_rows r, c')
    shapes = {
        'view_kernels': endless,
        'view_beside': 'CREATE VIEW v AS SELECT * FROM kernels',
        'virtual': 'CREATE VIRTUAL TABLE notes USING fts5(text)',
        'generated_column': 'CREATE TABLE g (a INTEGER, b INTEGER AS (a * 2))',
        'triggers': "CREATE TRIGGER t AFTER INSERT ON kernels BEGIN DELETE FROM kernels; END",
        'missing_table': 'DROP TABLE ranges',
        'version': "UPDATE sightline_meta SET value = '999' WHERE key = 'schema_version'",
    }
    for seed in sorted(os.listdir(out_dir)):
        if not seed.endswith('.sldb'):
            continue
        for shape, sql in shapes.items():
            dst = os.path.join(out_dir, 'shape_' + shape + '_' + seed)
            shutil.copyfile(os.path.join(out_dir, seed), dst)
            db = sqlite3.connect(os.path.abspath(dst))  # a path, never a URI
            try:
                db.executescript(sql)
                db.commit()
                db.execute('VACUUM')
            except sqlite3.Error as e:
                print(f'gather_seeds.sh: query database shape {shape} left out: {e}',
                      file=sys.stderr)
                db.close()
                os.remove(dst)
                continue
            db.close()

query_db_shapes(os.path.join(out, 'fuzz_query_db'))

# The inputs that once crashed a target start its corpus too.
root = 'tests/data/fuzz_regressions'
for d in sorted(os.listdir(root)):
    target = os.path.join(out, 'fuzz_reader.' + d)
    if not os.path.isdir(target):
        target = os.path.join(out, d)
    if not os.path.isdir(target):
        sys.exit(f'gather_seeds.sh: {root}/{d} names no reader and no fuzz target')
    for f in sorted(os.listdir(os.path.join(root, d))):
        shutil.copyfile(os.path.join(root, d, f), os.path.join(target, 'regression_' + f))
        shutil.copyfile(os.path.join(root, d, f), os.path.join(out, 'fuzz_pipeline', f'regression_{d}_{f}'))

empty = sorted(d for d in os.listdir(out) if d.startswith('fuzz_reader.') and not os.listdir(os.path.join(out, d)))
if empty:
    sys.exit('gather_seeds.sh: no shipped file is taken by ' + ', '.join(e[len('fuzz_reader.'):] for e in empty) +
             ': add a sample of that format to tests/data')
PY
rm "$out/classified.tsv"
# The row fuzzer's inputs are value encodings, not files: it starts from nothing.
du -sh "$out"/* | sed "s|$out/||"
