# awk -F, -f grid_summary.awk GRID.csv: the fastest strategy per cell of a 2-D sweep (the harness's
# CSV, rows with num_tokens > 0): per fusion x mode the number of cells each strategy wins, then for
# fusion none (or, without it, the first fusion in the file, e.g. residual_rmsnorm_fp8), per mode,
# a hidden (rows) x tokens (columns) map of the winner (N nccl, 1 one-shot, 2 two-shot, L lamport)
# and its time per call in us. Exact ties go to the earlier strategy in
# nccl, oneshot, twoshot, lamport (as `sightline allreduce tune` breaks them).
BEGIN { rank["nccl"] = 0; rank["oneshot"] = 1; rank["twoshot"] = 2; rank["lamport"] = 3
        letter["nccl"] = "N"; letter["oneshot"] = "1"; letter["twoshot"] = "2"; letter["lamport"] = "L"
        nfu = split("none residual_rmsnorm residual_rmsnorm_fp8 residual_rmsnorm_fp8_per_token residual_rmsnorm_nvfp4", fusions, " ") }
FNR == 1 || $4 <= 0 { next }
{
  k = $7 SUBSEP $8 SUBSEP $5 SUBSEP $4
  t = $9 + 0
  if (!(k in best) || t < best[k] || (t == best[k] && rank[$6] < rank[win[k]])) { best[k] = t; win[k] = $6 }
  fm[$7 SUBSEP $8] = 1; hid[$5 + 0] = 1; tok[$4 + 0] = 1; dtype[$2] = 1
}
function sorted(a, out,   n, i, j, x) {
  n = 0; for (x in a) out[++n] = x + 0
  for (i = 1; i <= n; ++i) for (j = i + 1; j <= n; ++j) if (out[j] < out[i]) { x = out[i]; out[i] = out[j]; out[j] = x }
  return n
}
END {
  nh = sorted(hid, H); nt = sorted(tok, T)
  for (d in dtype) dts = dts (dts == "" ? "" : ",") d
  fw = 17  # the fusion column: 17 wide, or the longest fusion name present + 1
  for (f = 1; f <= nfu; ++f) for (m = 0; m < 2; ++m)
    if (((fusions[f] SUBSEP (m ? "graph" : "eager")) in fm) && length(fusions[f]) + 1 > fw) fw = length(fusions[f]) + 1
  head = "dtype %s; cells won: %-" fw "s %-6s %5s %5s %5s %5s\n"
  row = "%-27s %-" fw "s %-6s %5d %5d %5d %5d\n"
  printf head, dts, "fusion", "mode", "nccl", "1sh", "2sh", "lmp"
  for (f = 1; f <= nfu; ++f) for (m = 0; m < 2; ++m) {
    fu = fusions[f]; mo = m ? "graph" : "eager"
    if (!((fu SUBSEP mo) in fm)) continue
    split("", c)
    for (k in win) { split(k, p, SUBSEP); if (p[1] == fu && p[2] == mo) c[win[k]]++ }
    printf row, "", fu, mo, c["nccl"], c["oneshot"], c["twoshot"], c["lamport"]
  }
  # The winner map: of fusion none when the file has it, else of the first fusion it has.
  mapfu = ""
  for (f = nfu; f >= 1; --f) if (((fusions[f] SUBSEP "graph") in fm) || ((fusions[f] SUBSEP "eager") in fm)) mapfu = fusions[f]
  for (m = 1; m >= 0; --m) {
    mo = m ? "graph" : "eager"
    if (!((mapfu SUBSEP mo) in fm)) continue
    printf "fusion %s, %s: winner and its us per call; rows hidden, columns tokens\n", mapfu, mo
    printf "%6s", "h/t"; for (j = 1; j <= nt; ++j) printf " %7d", T[j]; printf "\n"
    for (i = 1; i <= nh; ++i) {
      printf "%6d", H[i]
      for (j = 1; j <= nt; ++j) {
        k = mapfu SUBSEP mo SUBSEP H[i] SUBSEP T[j]
        if (k in win) printf " %s%6s", letter[win[k]], (best[k] < 100 ? sprintf("%.2f", best[k]) : sprintf("%.0f", best[k]))
        else printf " %7s", "-"
      }
      printf "\n"
    }
  }
}
