#!/bin/bash
# The recorder under faults on the GPU machine (issue 17; docs/reliability.md), run from the
# repository root after the GPU parts are built as in run_on_gpu.sh:
#   bash cuda/recorder/tools/fault_checks.sh
# Checks that `sightline record` returns the program's own exit status (a chosen code, a SIGKILL),
# that a recording cut by SIGKILL is analyzed and says it is partial, and that a full disk
# (/dev/full) leaves the program's exit status and output alone. Needs SL (the CPU sightline),
# SIGHTLINE_RECORDER_LIB and APP (recorder_test_app) set as run_on_gpu.sh sets them.
set -u -o pipefail
OUT=${OUT:-/tmp/recorder-out}
D=$(mktemp -d)
pass=0 fail=0
check() {  # name, condition (0 = pass), detail
  if [ "$2" -eq 0 ]; then echo "PASS  $1: $3"; pass=$((pass + 1)); else echo "FAIL  $1: $3"; fail=$((fail + 1)); fi
}

# 1. The program's exit code comes back unchanged.
$SL record -o "$D/code.slrec" -- sh -c "$APP --iters 20 >/dev/null; exit 7"
rc=$?
check "exit code kept" $([ $rc -eq 7 ]; echo $?) "rc=$rc (want 7)"

# 2. The program killed mid-run: 137 comes back, the partial file is analyzed and says so.
$SL record -o "$D/killed.slrec" -- sh -c "$APP --iters 1000000 >/dev/null & p=\$!; sleep 4; kill -9 \$p; wait \$p" 
rc=$?
check "SIGKILL status kept" $([ $rc -eq 137 ]; echo $?) "rc=$rc (want 137)"
$SL analyze "$D/killed.slrec" > "$D/killed.txt" 2>&1
arc=$?
kernels=$(grep -m1 -oE '[0-9,]+ kernels' "$D/killed.txt" | head -1)
partial=$(grep -cE 'recorder_not_finished|recorder_truncated_chunks' "$D/killed.txt")
check "killed recording analyzed" $([ $arc -eq 0 ]; echo $?) "analyze rc=$arc, $kernels"
check "killed recording says partial" $([ "$partial" -ge 1 ]; echo $?) "$(grep -E 'recorder_not_finished|recorder_truncated_chunks' "$D/killed.txt" | head -1 | cut -c1-160)"
cp "$D/killed.txt" "$OUT/killed_report.txt"

# 3. A full disk: the program runs to the end with its own status and output.
$SL record -o /dev/full -- sh -c "$APP --iters 50 > $D/app_out.txt; exit 3" 2> "$D/full_err.txt"
rc=$?
check "disk full: exit code kept" $([ $rc -eq 3 ]; echo $?) "rc=$rc (want 3)"
check "disk full: not read back" $(grep -q "/dev/full (not a regular file: not read back)" "$D/full_err.txt"; echo $?) "$(grep -m1 "sightline record:" "$D/full_err.txt" | cut -c1-160)"
check "disk full: one message" $(grep -q "cannot write the recording" "$D/full_err.txt"; echo $?) "$(grep -m1 "sightline" "$D/full_err.txt" | cut -c1-160)"
cp "$D/full_err.txt" "$OUT/disk_full_stderr.txt"

echo "fault checks: $pass passed, $fail failed"
rm -rf "$D"
[ $fail -eq 0 ]
