#!/usr/bin/env python3
"""Checks the serving-loop recordings of record_serve.sh (issue 29) against the program's truth and
prints the figures. Run on the development machine over the files the GPU run brought back:

  SL=build/src/sightline python3 examples/graph_decode/serve_check.py DIR [OUT.json]

DIR holds serve_node.sqlite.gz, serve_graph.sqlite.gz (nsys node and graph modes),
serve_rec_node.slrec, serve_rec_graph.slrec (the recorder), serve_graph_only.sqlite.gz,
serve_eager_only.sqlite.gz and each run's *.iterations.jsonl and *.plan.json.

Truth, from the nsys node export's own tables (SQL, independent of Sightline's importer): per
bucket B and per range path (embed, layer_i > attention, layer_i > mlp, head) the kernels an eager
step at batch B launches there, and per graph the kernels of one replay by the ranges open when
their node was captured (CUDA_GRAPH_NODE_EVENTS through originalGraphNodeId). Then Sightline's
reports (`analyze --format json`): cuda_graphs's by_capture_range for the node-traced files, the
whole-graph estimate for the graph-traced ones (paired with which capture, per range against the
node-traced measurement), and the findings graph_variants and graph_padding with the iteration log.
Prints PASS/FAIL lines and tables; exits 1 when a check fails.
"""
import bisect
import collections
import gzip
import json
import os
import re
import shutil
import sqlite3
import subprocess
import sys
import tempfile

SL = os.environ.get("SL", "build/src/sightline")
DIR = sys.argv[1]
OUT_JSON = sys.argv[2] if len(sys.argv) > 2 else ""
LEAVES = re.compile(r"^(embed|head|layer_\d+ > (attention|mlp))$")
results = []
figures = {}


def check(what, ok, detail=""):
    results.append((what, bool(ok), detail))
    print(f"{'PASS' if ok else 'FAIL'}: {what}" + (f" ({detail})" if detail else ""), flush=True)


def sqlite_of(name):
    path = os.path.join(DIR, name)
    if path.endswith(".gz"):
        tmp = os.path.join(tempfile.gettempdir(), os.path.basename(path)[:-3])
        with gzip.open(path, "rb") as f, open(tmp, "wb") as g:
            shutil.copyfileobj(f, g)
        path = tmp
    return sqlite3.connect(path)


def plan_of(run):
    with open(os.path.join(DIR, f"{run}.plan.json")) as f:
        return json.load(f)


class Ranges:
    """NVTX push/pop ranges per thread, and the path of names open at a time."""

    def __init__(self, db):
        self.by_tid = collections.defaultdict(list)
        for start, end, tid, name in db.execute(
                "select e.start, e.end, e.globalTid, coalesce(e.text, s.value) from NVTX_EVENTS e "
                "left join StringIds s on s.id = e.textId where e.eventType = 59 and e.end > 0"):
            self.by_tid[tid].append((start, end, name))
        for rows in self.by_tid.values():
            rows.sort()
        self.starts = {tid: [r[0] for r in rows] for tid, rows in self.by_tid.items()}

    def open_at(self, tid, t):
        rows = self.by_tid.get(tid, [])
        n = bisect.bisect_right(self.starts.get(tid, []), t)
        # Ranges nest on a thread: the ones started before t and not yet ended, outermost first.
        return [r for r in rows[:n] if r[1] > t and r[0] <= t]


def truth_from_node_export():
    db = sqlite_of("serve_node.sqlite.gz")
    ranges = Ranges(db)
    plan = plan_of("serve_node")
    # The eager steps' ranges and their batch: `step_N`, N = the plan's iteration (one counter over
    # every step), or, in recordings made before the steps shared one counter, `eager_step_N`, N =
    # the index among the eager steps.
    eager_bs = {}
    for p in plan["steps"]:
        if p["mode"] == "eager":
            eager_bs[f"eager_step_{p['step']}"] = p["batch_run"]
            if "iteration" in p:
                eager_bs[f"step_{p['iteration']}"] = p["batch_run"]
    # Eager kernels: their runtime launch call's thread and time.
    calls = {}
    for corr, tid, start in db.execute(
            "select correlationId, globalTid, start from CUPTI_ACTIVITY_KIND_RUNTIME"):
        calls.setdefault(corr, (tid, start))
    eager = collections.defaultdict(lambda: collections.Counter())  # bs -> path -> kernels
    runs = collections.Counter()
    seen_steps = set()
    for corr, node in db.execute(
            "select correlationId, graphNodeId from CUPTI_ACTIVITY_KIND_KERNEL"):
        if node:
            continue
        tid, t = calls[corr]
        names = [r[2] for r in ranges.open_at(tid, t)]
        steps = [n for n in names if n in eager_bs]
        if not steps:
            continue
        step = steps[0]
        seen_steps.add(step)
        path = " > ".join(names[names.index(steps[0]) + 1:]) or "(no range)"
        eager[eager_bs[step]][path] += 1
    for step in seen_steps:
        runs[eager_bs[step]] += 1
    eager_per_run = {bs: {p: n / runs[bs] for p, n in c.items()} for bs, c in eager.items()}
    # Graph kernels: node -> original node's creation (thread, time) -> ranges open then.
    created, original = {}, {}
    for node, orig, tid, start in db.execute(
            "select graphNodeId, originalGraphNodeId, globalTid, start from CUDA_GRAPH_NODE_EVENTS "
            "order by start"):
        created.setdefault(node, (tid, start))
        if orig:
            original.setdefault(node, orig)
    graph = collections.defaultdict(lambda: collections.Counter())  # bucket -> path -> kernels
    launches = collections.defaultdict(set)
    for corr, node in db.execute(
            "select correlationId, graphNodeId from CUPTI_ACTIVITY_KIND_KERNEL where graphNodeId"):
        root = node
        for _ in range(16):
            if root not in original:
                break
            root = original[root]
        tid, t = created[root]
        names = [r[2] for r in ranges.open_at(tid, t)]
        caps = [n for n in names if n.startswith("capture_bs")]
        bucket = int(caps[0][len("capture_bs"):]) if caps else -1
        path = " > ".join(names[names.index(caps[0]) + 1:]) if caps else "(no capture range)"
        graph[bucket][path or "(no range)"] += 1
        launches[bucket].add(corr)
    graph_per_replay = {b: {p: n / len(launches[b]) for p, n in c.items()}
                        for b, c in graph.items()}
    replays = {b: len(c) for b, c in launches.items()}
    return eager_per_run, graph_per_replay, replays, plan


def analyze(name, extra=""):
    path = os.path.join(DIR, name)
    p = subprocess.run(f"{SL} analyze --format json {extra} '{path}'", shell=True,
                       stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    if p.returncode != 0:
        check(f"{name}: sightline analyze {extra}", False, p.stderr.strip()[-300:])
        return {}, {}
    report = json.loads(p.stdout)
    return {s["key"]: s for s in report["sections"]}, report


def by_bucket_rows(section):
    """by_capture_range rows as {bucket: {path: row}}."""
    out = collections.defaultdict(dict)
    for row in section["tables"]["by_capture_range"]["rows"]:
        m = re.match(r"^capture_bs(\d+) > (.*)$", row["path"])
        if m:
            out[int(m.group(1))][m.group(2)] = row
        else:
            out[-1][row["path"]] = row
    return out


def check_node_traced(name, eager, replays_truth, plan):
    sections, _ = analyze(name)
    cg = sections.get("cuda_graphs")
    if cg is None:
        check(f"{name}: cuda_graphs section", False)
        return {}
    f = cg["facts"]
    check(f"{name}: every graph kernel has a capture point",
          f["with_capture"] == f["graph_kernels"] and f["graph_kernels"] > 0,
          f"{f['with_capture']} of {f['graph_kernels']}")
    rows = by_bucket_rows(cg)
    leaves_ok, counted, total = True, 0, 0
    for bucket, paths in rows.items():
        for path, row in paths.items():
            kernels = row["nodes"] * row["replays"]
            total += kernels
            if bucket >= 0 and LEAVES.match(path):
                counted += kernels
            else:
                leaves_ok = False
    check(f"{name}: every graph kernel in exactly one of embed, layer_i > attention|mlp, head "
          f"below its capture_bsB", leaves_ok and counted == f["graph_kernels"],
          f"{counted} of {f['graph_kernels']} graph kernels in "
          f"{sum(len(p) for p in rows.values())} rows")
    buckets = plan["buckets"]
    for b in buckets:
        paths = rows.get(b, {})
        want = eager.get(b, {})
        same = [p for p in want if p in paths and paths[p]["nodes"] == want[p]]
        check(f"{name}: bs{b}: per range, kernels per replay = the eager step's at batch {b}",
              len(same) == len(want) == len(paths) and len(want) > 0,
              f"{len(same)} of {len(want)} ranges; {sum(r['nodes'] for r in paths.values())} "
              f"kernels per replay")
        replays = {r["replays"] for r in paths.values()}
        check(f"{name}: bs{b}: replays = the plan's", replays == {replays_truth[b]},
              f"{sorted(replays)} vs {replays_truth[b]}")
    return rows


def check_findings(name, plan):
    log = os.path.join(DIR, name.split(".")[0] + ".iterations.jsonl")
    _, report = analyze(name, f"--iteration-log '{log}'")
    findings = {f["id"]: f for f in report.get("findings", [])}
    graph_steps = [p for p in plan["steps"] if p["mode"] == "graph"]
    padded = [p for p in graph_steps if p["batch_run"] > p["real_batch"]]
    slots = sum(p["batch_run"] for p in graph_steps)
    pad = sum(p["batch_run"] - p["real_batch"] for p in graph_steps)
    v, g = findings.get("graph_variants"), findings.get("graph_padding")
    check(f"{name}: graph_variants fires", v is not None, v and v.get("title", ""))
    check(f"{name}: graph_padding fires", g is not None, g and g.get("title", ""))
    figures[f"{name}:findings"] = {
        "graph_variants": v, "graph_padding": g,
        "truth": {"graph_steps": len(graph_steps), "padded": len(padded),
                  "padding_pct": 100.0 * pad / slots, "replays_per_bucket": dict(
                      collections.Counter(p["batch_run"] for p in graph_steps))}}
    for f in (v, g):
        if f:
            print(f"  {f['id']}: {f.get('title')}")
            evidence = f.get("evidence", {})
            items = evidence.items() if isinstance(evidence, dict) else enumerate(evidence)
            for key, value in list(items)[:14]:
                print(f"    {key}: {value}")
    print(f"  truth: {len(graph_steps)} graph steps, {len(padded)} padded, padding "
          f"{100.0 * pad / slots:.1f}% of {slots} replayed slots")


def check_whole_graph(name, measured, plan, extra=""):
    buckets = plan["buckets"]
    sections, report = analyze(name, extra)
    cg = sections.get("cuda_graphs")
    if cg is None:
        check(f"{name}: cuda_graphs section", False)
        return
    f = cg["facts"]
    check(f"{name}: every graph estimated", f.get("whole_graphs_estimated") == len(buckets) ==
          f.get("whole_graphs"), f"{f.get('whole_graphs_estimated')} of {f.get('whole_graphs')}; "
          f"{f.get('capture_windows')} captures")
    t = cg["tables"].get("whole_graph_estimate", {"rows": []})
    notes = " ".join(cg.get("notes", []) + [t.get("note", "")])
    paired = {int(g): (cap, how) for g, cap, how in re.findall(
        r"Graph (\d+): [^;]*; capture \(in '([^']*)'\) found by "
        r"(the graph's creation record|order)",
        notes)}
    by_creation = sum(1 for cap, how in paired.values() if how.startswith("the graph's creation"))
    check(f"{name}: each graph paired with its capture by its creation record",
          by_creation == len(buckets), f"{by_creation} of {len(buckets)}")
    per_graph = collections.defaultdict(dict)
    for row in t["rows"]:
        per_graph[row["graph"]][row["path"]] = row
    # The bucket of each graph, from the run counts: runs per graph must equal the plan's replays
    # of the bucket whose capture it was paired with.
    runs = {int(g): int(n) for g, n in re.findall(r"Graph (\d+): (\d+) runs", notes)}
    table = []
    for graph, rows in sorted(per_graph.items()):
        cap = paired.get(graph, ("", ""))[0]
        b = int(cap[len("capture_bs"):]) if cap.startswith("capture_bs") else None
        m = measured.get(b, {})
        devs = sorted(100.0 * (r["per_replay_ns"] - m[p]["per_replay_ns"]) / m[p]["per_replay_ns"]
                      for p, r in rows.items() if p in m and m[p]["per_replay_ns"] > 0)
        est = sum(r["per_replay_ns"] for r in rows.values())
        meas = sum(r["per_replay_ns"] for r in m.values())
        table.append((graph, b, runs.get(graph), sum(r["launches"] for r in rows.values()),
                      len(rows), est, meas, devs))
    print(f"  {name}: graph, capture paired, runs, launches, ranges, est. us/replay (sum over "
          f"ranges), node-traced measured us/replay of that bucket, per-range deviation "
          f"min/median/max %")
    for graph, b, n, launches, nrows, est, meas, devs in table:
        med = devs[len(devs) // 2] if devs else float("nan")
        print(f"    graph {graph}: capture_bs{b}, {n} runs, {launches} launches, {nrows} ranges, "
              f"est {est / 1e3:.1f} us, measured {meas / 1e3:.1f} us; per range "
              f"{devs[0] if devs else 0:+.1f} / {med:+.1f} / {devs[-1] if devs else 0:+.1f} %")
    figures[f"{name}:whole_graph{extra}"] = [
        {"graph": g, "bucket": b, "runs": n, "launches": l, "ranges": k, "est_ns": e,
         "measured_ns": m, "per_range_dev_pct": d} for g, b, n, l, k, e, m, d in table]
    want_runs = collections.Counter(p["batch_run"] for p in plan["steps"] if p["mode"] == "graph")
    check(f"{name}: each graph paired with its own bucket's capture (its runs = the plan's "
          f"replays of that bucket; one graph per bucket)",
          sorted(b for _, b, *_ in table if b is not None) == sorted(buckets) and
          all(n == want_runs[b] for _, b, n, *_ in table),
          str([(g, b, n) for g, b, n, *_ in table]))
    if "--iteration-log" not in extra:
        return
    # With the iteration log: each graph's batch is its bucket, and where the log holds the eager
    # steps (graph_serve.py logs them since the steps share one counter) its estimate takes the
    # eager runs of that bucket only (the whole_graphs table's selection).
    eager_logged = any(p["mode"] == "eager" and "iteration" in p for p in plan["steps"])
    rows = {r["graph"]: r for r in cg["tables"].get("whole_graphs", {"rows": []})["rows"]}
    got = [(g, b, rows.get(g, {}).get("batch"), rows.get(g, {}).get("selection"),
            rows.get(g, {}).get("eager_runs")) for g, b, *_ in table]
    want_selection = "of_batch" if eager_logged else "all_none_of_batch"
    per_bucket = collections.Counter(p["batch_run"] for p in plan["steps"] if p["mode"] == "eager")
    check(f"{name}: with the iteration log each graph's batch is its bucket and its estimate takes "
          f"{'the eager runs of that bucket' if eager_logged else 'all eager runs (none logged)'}",
          all(batch == b and sel == want_selection and
              (not eager_logged or runs == per_bucket[b]) for _, b, batch, sel, runs in got),
          str(got))


def main():
    eager, graph_truth, replays, plan = truth_from_node_export()
    buckets = plan["buckets"]
    print("truth (nsys node export, SQL): per bucket, kernels per eager step and per replay")
    for b in buckets:
        e, g = eager.get(b, {}), graph_truth.get(b, {})
        print(f"  bs{b}: eager {sum(e.values()):.0f} in {len(e)} ranges; replay "
              f"{sum(g.values()):.0f} in {len(g)} ranges; {replays.get(b)} replays")
        check(f"truth: bs{b}: per range, a replay's kernels (SQL) = the eager step's",
              e == g and len(e) > 0,
              ", ".join(f"{p}: {g.get(p)} vs {e.get(p)}" for p in sorted(set(e) | set(g))
                        if g.get(p) != e.get(p))[:300])
    check("truth: no graph kernel outside a capture_bsB range",
          -1 not in graph_truth, str(graph_truth.get(-1)))
    figures["truth"] = {"eager_per_run": eager, "graph_per_replay": graph_truth,
                        "replays": replays}
    measured = check_node_traced("serve_node.sqlite.gz", eager, replays, plan)
    rec_plan = plan_of("serve_rec_node")
    rec_replays = collections.Counter(p["batch_run"] for p in rec_plan["steps"]
                                      if p["mode"] == "graph")
    check_node_traced("serve_rec_node.slrec", eager, rec_replays, rec_plan)
    figures["measured_node"] = {b: {p: r["per_replay_ns"] for p, r in rows.items()}
                                for b, rows in measured.items()}
    for name in ("serve_node.sqlite.gz", "serve_rec_node.slrec", "serve_graph.sqlite.gz",
                 "serve_rec_graph.slrec"):
        check_findings(name, plan_of(name.split(".")[0]))
    for name in ("serve_graph.sqlite.gz", "serve_rec_graph.slrec"):
        check_whole_graph(name, measured, plan_of(name.split(".")[0]))
        log = os.path.join(DIR, name.split(".")[0] + ".iterations.jsonl")
        check_whole_graph(name, measured, plan_of(name.split(".")[0]),
                          extra=f"--iteration-log '{log}'")
    ref = os.path.join(DIR, "serve_eager_only.sqlite.gz")
    if os.path.exists(os.path.join(DIR, "serve_graph_only.sqlite.gz")):
        check_whole_graph("serve_graph_only.sqlite.gz", measured, plan_of("serve_graph_only"),
                          extra=f"--eager-reference '{ref}'")
    failed = [r for r in results if not r[1]]
    print(f"{len(results) - len(failed)} of {len(results)} checks passed")
    if OUT_JSON:
        with open(OUT_JSON, "w") as f:
            json.dump({"checks": results, "figures": figures}, f, indent=1, default=str)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
