#!/usr/bin/env bash
# Runs two sightline binaries (e.g. the commit before a refactor and after it) on every shipped
# sample, every trace in ../shared/traces, the shipped ranks and diff pairs, and reports which JSON
# reports differ, with the differing lines. For proving that a refactor leaves reports unchanged.
#
# Usage: bash scripts/compare-reports.sh OLD_SIGHTLINE NEW_SIGHTLINE [OUT_DIR]
# Environment: SHARED (default ../shared/traces). *.sqlite.gz files are inflated into OUT_DIR first.
set -uo pipefail
cd "$(dirname "$0")/.."
OLD=$1
NEW=$2
OUT=${3:-$(mktemp -d)}
SHARED=${SHARED:-../shared/traces}
mkdir -p "$OUT"

inputs=(examples/samples/llama_decode_h100.nsys.sqlite examples/samples/llama_decode_h100.pytorch.json.gz
        tests/data/recorder/recorder_test_app_h100.slrec)
if [ -d "$SHARED" ]; then
  for f in "$SHARED"/*.json.gz "$SHARED"/*.sqlite; do [ -f "$f" ] && inputs+=("$f"); done
  for f in "$SHARED"/*.sqlite.gz; do
    [ -f "$f" ] || continue
    plain="$OUT/$(basename "${f%.gz}")"
    [ -f "$plain" ] || gzip -dc "$f" >"$plain"
    inputs+=("$plain")
  done
fi

same=0
differ=0
run_pair() {  # name, then the arguments after the binary
  local name=$1
  shift
  "$OLD" "$@" --format json -o "$OUT/$name.old.json" 2>"$OUT/$name.old.err"
  local rc_old=$?
  "$NEW" "$@" --format json -o "$OUT/$name.new.json" 2>"$OUT/$name.new.err"
  local rc_new=$?
  if [ "$rc_old" != "$rc_new" ]; then
    echo "DIFFERENT exit code: $name (old $rc_old, new $rc_new)"
    differ=$((differ + 1))
  elif cmp -s "$OUT/$name.old.json" "$OUT/$name.new.json"; then
    echo "same: $name"
    same=$((same + 1))
  else
    echo "DIFFERENT: $name ($(diff "$OUT/$name.old.json" "$OUT/$name.new.json" | grep -c '^[<>]') lines)"
    diff "$OUT/$name.old.json" "$OUT/$name.new.json" | head -20 | sed 's/^/    /'
    differ=$((differ + 1))
  fi
}

for f in "${inputs[@]}"; do run_pair "analyze_$(basename "$f")" analyze "$f"; done
if [ -d "$SHARED" ]; then
  run_pair ranks_hta_sampled analyze "$SHARED/kineto_hta_sampled_rank0.json.gz" \
    "$SHARED/kineto_hta_sampled_rank1.json.gz"
  run_pair diff_hta diff "$SHARED/kineto_hta_diff_control.json.gz" "$SHARED/kineto_hta_diff_test.json.gz"
fi
run_pair diff_samples diff examples/samples/llama_decode_h100.nsys.sqlite \
  examples/samples/llama_decode_h100.pytorch.json.gz
echo "reports: $same same, $differ different (outputs in $OUT)"
