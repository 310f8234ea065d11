#!/usr/bin/env bash
# Issue 52's nsys comparison: `sightline analyze` of one export by two binaries (BEFORE, AFTER) at
# -j 1 and -j 2, alternating, with a bare sqlite3 scan of the columns the reader takes from the
# kernel and API tables (the same mmap size) in each round. One line per run: who, jobs, wall s,
# user s, sys s, peak RSS KB; then the medians. The reports of each pair are compared.
# Usage: bash nsys_pages_runs.sh BEFORE AFTER FILE [ROUNDS]
set -euo pipefail
before=$1
after=$2
file=$3
rounds=${4:-3}
out=$(mktemp -d)
kernel="max(start), max(end), max(deviceId), max(streamId), max(correlationId), max(globalPid),
  max(demangledName), max(shortName), max(gridX), max(gridY), max(gridZ), max(blockX), max(blockY),
  max(blockZ), max(registersPerThread), max(staticSharedMemory), max(dynamicSharedMemory),
  max(graphNodeId)"
api="max(start), max(end), max(eventClass), max(globalTid), max(correlationId), max(nameId)"
sql="PRAGMA mmap_size = 4294967296; SELECT $kernel FROM CUPTI_ACTIVITY_KIND_KERNEL;
  SELECT $api FROM CUPTI_ACTIVITY_KIND_RUNTIME;"
for i in $(seq "$rounds"); do
  for j in 1 2; do
    for who in before after; do
      bin=$before
      [ "$who" = after ] && bin=$after
      /usr/bin/time -f "$who j$j %e %U %S %M" "$bin" analyze -j "$j" "$file" --format json \
        -o "$out/$who.j$j.json" 2>&1 | tail -n 1
    done
    cmp -s "$out/before.j$j.json" "$out/after.j$j.json" || echo "REPORTS DIFFER at -j $j (round $i)"
  done
  /usr/bin/time -f "sqlite3 j1 %e %U %S %M" sqlite3 "$file" "$sql" 2>&1 >/dev/null | tail -n 1
done | tee "$out/runs.txt"
echo "medians (wall s, user s, sys s, peak RSS MB):"
for key in "before j1" "after j1" "before j2" "after j2" "sqlite3 j1"; do
  grep "^$key " "$out/runs.txt" | awk -v key="$key" '
    { w[NR] = $3; u[NR] = $4; s[NR] = $5; m[NR] = $6 }
    function med(a, n,   i, j, t) {
      for (i = 1; i <= n; i++) for (j = i + 1; j <= n; j++) if (a[j] < a[i]) { t = a[i]; a[i] = a[j]; a[j] = t }
      return n % 2 ? a[(n + 1) / 2] : (a[n / 2] + a[n / 2 + 1]) / 2
    }
    END { if (NR) printf "%-11s %6.2f %6.2f %6.2f %6.0f  (%d runs)\n", key, med(w, NR), med(u, NR), med(s, NR), med(m, NR) / 1024, NR }'
done
rm -rf "$out"
