#!/bin/bash
# Session 19, two H200s: the pipelined push two-shot. Build, quick check (every strategy, dtype,
# mode; push and pull), two-shot checks at 16M..256M for every pipeline setting, the library's
# GPU test, then NCCL and two-shot at 16M..256M per pipeline setting and grid cap, twice
# (interleaved), with the peer-copy probes; a table of medians last.
set -u
cd "$(dirname "$0")/../.."
O=${OUT:-/tmp/s19}
mkdir -p "$O/ar"
export NCCL_NVLS_ENABLE=0
T0=$(date +%s)
NP=2 STAGES="quickcheck" timeout 240 bash cuda/allreduce/run_on_gpu.sh "$O/ar" > "$O/ar_stages.log" 2>&1
echo "stages rc=$?"
grep -E "^==|FAIL|PASS|passed|failed|configurations|built in" "$O/ar_stages.log" | head -40
B=/tmp/bg/allreduce/sightline-allreduce-bench
mpi() { timeout "$1" mpirun --allow-run-as-root -n 2 --bind-to none -x NCCL_NVLS_ENABLE=0 "$B" "${@:2}"; }
for p in 0 1 2 4 8; do
  mpi 60 --check-only --strategy twoshot --dtype bf16,fp32 -b 16M -e 256M -f 2 --pipeline $p 2>&1 |
    grep -v '^\[' | tail -2 | sed "s/^/check pipeline $p: /"
done
mpi 60 --check-only --strategy twoshot --dtype bf16 -b 16M -e 64M -f 2 --pipeline 2 --max-blocks 256 2>&1 |
  grep -v '^\[' | tail -1 | sed "s/^/check pipeline 2 blocks 256: /"
mpi 60 --strategy nccl,twoshot -b 64M -e 64M --peer-bw --budget-ms 20 -o "$O/peer.csv" 2>&1 | grep peer_copy
for rep in 1 2; do
  for cfg in "0 128" "1 128" "2 128" "4 128" "8 128" "2 256" "4 256" "1 256"; do
    set -- $cfg
    mpi 90 --strategy nccl,twoshot -b 16M -e 256M -f 2 --budget-ms 40 --pipeline $1 --max-blocks $2 \
      -o "$O/big_p$1_b$2_r$rep.csv" > "$O/big_p$1_b$2_r$rep.log" 2>&1 || echo "run p$1 b$2 r$rep FAILED"
  done
done
echo "bf16, 2 x H200; median us per call (two runs: r1/r2); pNbM = --pipeline N --max-blocks M"
awk -F, 'FNR > 1 { split(FILENAME, a, "big_"); k = a[2]; sub(/_r[12].csv/, "", k); r = (FILENAME ~ /_r1/) ? 1 : 2
  key = $3 " " $8; if ($6 == "nccl") { n[key] = n[key] sprintf("%.1f ", $9) } else { t[key, k] = t[key, k] sprintf("%s%.1f", (t[key, k] == "" ? "" : "/"), $9); cfgs[k] = 1 }; keys[key] = 1 }
  END { printf "%-18s %-22s", "size mode", "nccl (all runs)"; for (c in cfgs) printf " %12s", c; printf "\n"
        for (key in keys) { printf "%-18s %-22s", key, substr(n[key], 1, 22); for (c in cfgs) printf " %12s", t[key, c]; printf "\n" } }' \
  "$O"/big_p*_r*.csv | sort -n
left=$(( 560 - ($(date +%s) - T0) ))
echo "lib stage with ${left} s left"
if [ "$left" -gt 60 ]; then
  NP=2 STAGES=lib timeout "$left" bash cuda/allreduce/run_on_gpu.sh "$O/ar" > "$O/ar_lib.log" 2>&1
  echo "lib rc=$?"; grep -E "PASS|FAIL|checks" "$O/ar_lib.log" | head -10
fi
