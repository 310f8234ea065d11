#!/usr/bin/env bash
# Several world sizes on one multi-GPU machine, in one call: run_on_gpu.sh once per step of PLAN,
# in order of priority, under one deadline, each world size into its own folder; then one tarball
# (the device tool brings back few files) and a summary.
# Usage (repository root): cuda/allreduce/run_worlds.sh OUT_DIR [SECONDS]
# Environment: PLAN, steps "NP:stage+stage" separated by spaces (default below), BIN and the other
# variables of run_on_gpu.sh.
set -u -o pipefail
out=${1:?usage: run_worlds.sh OUT_DIR [SECONDS]}
secs=${2:-200}
export DEADLINE=$(( $(date +%s) + secs ))
plan=${PLAN:-"4:check+size+pull+order 4:grid 3:check 2:check+size 2:grid"}
work=/tmp/allreduce-worlds
rm -rf "$work" && mkdir -p "$work" "$out"
for step in $plan; do
  np=${step%%:*}
  stages=${step#*:}
  echo "=== world $np: ${stages//+/ } ($(( DEADLINE - $(date +%s) )) s left)"
  n=$(( ${n:-0} + 1 ))
  NP=$np STAGES="${stages//+/ }" bash cuda/allreduce/run_on_gpu.sh "$work/w$np" > "$work/step$n.log" 2>&1
  echo "exit $?"
  grep -m1 '^allreduce bench' "$work/step$n.log"
  pat='^(== [^s]|done:|peer_copy|rank [0-9]+: error|timeout|.*FAILED)'
  [[ $stages == *size* ]] && pat="$pat|^== summary|^ +[0-9]+ (nccl|oneshot|twoshot) "
  grep -E "$pat" "$work/step$n.log"
done
tar -czf "$out/results.tar.gz" -C "$work" .
ls -l "$work"/w*
