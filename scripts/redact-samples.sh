#!/usr/bin/env bash
# Redacts, in place, every Nsight Systems export and Sightline recording the project ships
# (examples/, tests/data/, docs/evidence/): the capturing machine's environment, host name and user
# leave them; every figure stays (tests/exporters/redact_test.cc checks both). Run it after adding
# one.
# Usage: scripts/redact-samples.sh [FILE...]   (default: every shipped .sqlite and .slrec)
set -euo pipefail
cd "$(dirname "$0")/.."
bin=build/src/sightline
[ -x "$bin" ] || bash scripts/build.sh >/dev/null
if [ $# -eq 0 ]; then
  mapfile -t files < <(git ls-files 'examples/*.sqlite' 'examples/*.slrec' 'tests/data/*.sqlite' \
    'tests/data/*.slrec' 'docs/evidence/*.sqlite' 'docs/evidence/*.slrec')
else
  files=("$@")
fi
for f in "${files[@]}"; do
  tmp="$f.redacted.tmp"
  if "$bin" redact "$f" -o "$tmp"; then
    mv "$tmp" "$f"
  else
    rm -f "$tmp"
    echo "redact-samples: left $f as it is (see the error above)" >&2
  fi
done
