#!/bin/bash
# Session 19, two H200s, second version of the pipelined two-shot (one signal, one wait per step).
# Build; quick check (every strategy, dtype, mode; push and pull); two-shot checks at 16M..256M and
# at 48 MB + 16 bytes (uneven segments) for every pipeline setting; NCCL and two-shot at 16M..256M
# per setting, twice (interleaved), with the peer-copy probes; a table of medians; the library
# test last if time is left. CSVs and logs in $OUT/s19_ar2.tgz.
set -u
cd "$(dirname "$0")/../.."
O=${OUT:-/tmp/s19}
W=/tmp/s19w; mkdir -p "$W/ar"
export NCCL_NVLS_ENABLE=0
T0=$(date +%s)
NP=2 STAGES="quickcheck" timeout 240 bash cuda/allreduce/run_on_gpu.sh "$W/ar" > "$W/ar_stages.log" 2>&1
echo "stages rc=$?"
grep -E "^==|FAIL|configurations|built in" "$W/ar_stages.log" | head -20
B=/tmp/bg/allreduce/sightline-allreduce-bench
mpi() { timeout "$1" mpirun --allow-run-as-root -n 2 --bind-to none -x NCCL_NVLS_ENABLE=0 "$B" "${@:2}"; }
for p in 0 1 2 4 8 16 32; do
  mpi 60 --check-only --strategy twoshot --dtype bf16,fp32 -b 16M -e 256M -f 2 --pipeline $p 2>&1 |
    grep -E "done|FAIL|rror" | sed "s/^/check pipeline $p: /"
  mpi 60 --check-only --strategy twoshot --dtype bf16,fp16,fp32 -b 50331664 -e 50331664 --pipeline $p 2>&1 |
    grep -E "done|FAIL|rror" | sed "s/^/check pipeline $p, 48M+16: /"
done
mpi 60 --strategy nccl,twoshot -b 64M -e 64M --peer-bw --budget-ms 20 -o "$W/peer.csv" 2>&1 | grep peer_copy
for rep in 1 2; do
  for p in 0 4 8 16 32; do
    mpi 90 --strategy nccl,twoshot -b 16M -e 256M -f 2 --budget-ms 40 --pipeline $p \
      -o "$W/big_p${p}_r$rep.csv" > "$W/big_p${p}_r$rep.log" 2>&1 || echo "run p$p r$rep FAILED"
  done
done
echo "bf16, 2 x H200; median us per call (two runs: r1/r2); pN = --pipeline N (vectors per thread per chunk)"
awk -F, 'FNR > 1 { split(FILENAME, a, "big_"); k = a[2]; sub(/_r[12].csv/, "", k)
  key = $3 " " $8; if ($6 == "nccl") { n[key] = n[key] sprintf("%.1f ", $9) } else { t[key, k] = t[key, k] sprintf("%s%.1f", (t[key, k] == "" ? "" : "/"), $9); cfgs[k] = 1 }; keys[key] = 1 }
  END { printf "%-18s %-24s", "size mode", "nccl (all runs)"; for (c in cfgs) printf " %12s", c; printf "\n"
        for (key in keys) { printf "%-18s %-24s", key, substr(n[key], 1, 24); for (c in cfgs) printf " %12s", t[key, c]; printf "\n" } }' \
  "$W"/big_p*_r*.csv | sort -n
left=$(( 560 - ($(date +%s) - T0) ))
echo "lib stage with ${left} s left"
if [ "$left" -gt 150 ]; then
  NP=2 STAGES=lib timeout "$left" bash cuda/allreduce/run_on_gpu.sh "$W/ar" > "$W/ar_lib.log" 2>&1
  echo "lib rc=$?"; grep -E "PASS|FAIL|checks" "$W/ar_lib.log" | head -10
fi
tar czf "$O/s19_ar2.tgz" -C "$W" .
