#!/bin/bash
# Writes `sightline analyze` reports (text and JSON) of every shipped sample into OUT, one file per
# input and format, with the exit code and standard error, so two builds' reports can be compared:
#   reports.sh BINARY OUT   (then: diff -r OUT_before OUT_after)
# Inputs: every file under tests/data (except the layering fixtures, which are source),
# examples/samples and /work/shared/traces, and each TensorRT export directory as a whole.
set -u
bin=$1; out=$2; root=$(cd "$(dirname "$0")/../../.." && pwd)
mkdir -p "$out"
inputs() {
  find "$root/tests/data" "$root/examples/samples" /work/shared/traces -type f ! -path '*/layering*' \
    ! -name '*.md' ! -name '*.py' ! -name '*.sh' | sort
  find "$root/tests/data/trt" /work/shared/traces/trt -mindepth 1 -type d | sort
}
inputs | while read -r f; do
  key=$(echo "$f" | sed "s|$root/||; s|/work/shared/traces|shared|; s|/|__|g")
  for fmt in text json; do
    timeout 300 "$bin" analyze -q -j1 --format $fmt "$f" > "$out/$key.$fmt" 2> "$out/$key.$fmt.err"
    echo "rc=$?" >> "$out/$key.$fmt.err"
  done
done
