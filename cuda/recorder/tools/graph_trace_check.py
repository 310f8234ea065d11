#!/usr/bin/env python3
"""GPU-machine check of `sightline record --cuda-graph-trace graph` (run by run_overhead.sh when
GRAPH_CHECK=1): records decode_loop with CUDA graphs both ways and checks, from the files (read with
slrec_summary.py, independent of the C++ reader), that graph mode holds one whole-graph record per
cudaGraphLaunch and no per-node kernels for the graph's work, while node mode holds every kernel;
then shows what `sightline analyze` makes of the graph-mode file. Prints PASS/FAIL lines.
Environment: SL, DL, OUT.
"""
import json
import os
import subprocess

HERE = os.path.dirname(os.path.abspath(__file__))
SL, DL, OUT = os.environ["SL"], os.environ["DL"], os.environ.get("OUT", "/tmp")
ITERS = 300


def sh(cmd):
    p = subprocess.run(cmd, shell=True, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    return p.returncode, p.stdout


def summary(path):
    _, out = sh(f"python3 {HERE}/slrec_summary.py {path} --timing")
    return json.loads(out.strip().splitlines()[-1])


def main():
    app = f"{DL} --iterations {ITERS} --warmup 20 --cuda-graph"
    files = {}
    for mode in ("node", "graph"):
        path = f"/tmp/graph_check_{mode}.slrec"
        rc, out = sh(f"{SL} record --cuda-graph-trace {mode} -o {path} -- {app}")
        print(f"record --cuda-graph-trace {mode}: rc={rc}: "
              + " | ".join(l for l in out.splitlines() if "sightline" in l or "median" in l))
        files[mode] = summary(path)
    node, graph = files["node"], files["graph"]
    launches = graph["timing"]["api_counts"].get("cudaGraphLaunch", 0)
    runs = graph["records"].get("graph", 0)
    node_launches = node["timing"]["api_counts"].get("cudaGraphLaunch", 0)
    print(f"node mode: {node['kernels']} kernels, {node_launches} cudaGraphLaunch calls, "
          f"{node['records'].get('graph', 0)} whole-graph records")
    print(f"graph mode: {graph['kernels']} kernels, {launches} cudaGraphLaunch calls, {runs} "
          f"whole-graph records")
    ok = runs == launches and launches > 0 and node["records"].get("graph", 0) == 0
    print(("PASS" if ok else "FAIL") + ": one whole-graph record per cudaGraphLaunch in graph mode, "
          "none in node mode")
    per_graph = (node["kernels"] - graph["kernels"]) / max(launches, 1)
    print(f"kernels per graph run (node-mode kernels minus graph-mode kernels, per launch): "
          f"{per_graph:.1f}")
    rc, out = sh(f"{SL} analyze /tmp/graph_check_graph.slrec")
    print(f"sightline analyze (graph mode): rc={rc}\n" + "\n".join(out.splitlines()[:45]))
    with open(os.path.join(OUT, "graph_trace_check.json"), "w") as f:
        json.dump({"node": node, "graph": graph}, f, indent=1)


if __name__ == "__main__":
    main()
