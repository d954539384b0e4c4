#!/usr/bin/env python3
"""plot_sweeps: runs three `hybridio-sim sweep`s and draws them with matplotlib (Agg):
  policies_vs_cluster_size.png   checkpoint write time per policy vs number of nodes
  ckpt_time_vs_stripe_count.png  checkpoint write time per policy vs Lustre stripe count
  goodput_vs_interval.png        training goodput per policy vs checkpoint interval
Usage: plot_sweeps.py --sim PATH/hybridio-sim --out DIR [--quick] [--jobs N]
--quick uses the Llama3-8B preset and fewer points (seconds; used by the test).
Needs python3-matplotlib (Debian)."""
import argparse
import csv
import os
import subprocess
import sys
from collections import defaultdict

try:
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
except ImportError:
    print("SKIP: matplotlib is not installed (apt-get install python3-matplotlib)")
    sys.exit(77)


def sweep(sim, out, name, grids, extra, jobs):
    d = os.path.join(out, name)
    cmd = [sim, "sweep", "--out", d, "--jobs", str(jobs)]
    for g in grids:
        cmd += ["--grid", g]
    subprocess.run(cmd + extra, check=True, stdout=subprocess.DEVNULL)
    with open(os.path.join(d, "results.csv")) as f:
        return list(csv.DictReader(f))


def plot(rows, x, y, xlabel, ylabel, title, path, logx=False, ytrans=float):
    series = defaultdict(list)
    for r in rows:
        series[r["policy"]].append((float(r[x]), ytrans(r[y])))
    fig, ax = plt.subplots(figsize=(6.4, 4.2))
    for pol, pts in sorted(series.items()):
        pts.sort()
        ax.plot([p[0] for p in pts], [p[1] for p in pts], marker="o", label=pol)
    if logx:
        ax.set_xscale("log", base=2)
    ax.set_xlabel(xlabel)
    ax.set_ylabel(ylabel)
    ax.set_title(title)
    ax.grid(True, alpha=0.3)
    ax.legend()
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
    if os.path.getsize(path) < 1000:
        sys.exit(f"plot_sweeps: {path} looks empty")
    print("wrote", path)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--sim", required=True)
    ap.add_argument("--out", required=True)
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--jobs", type=int, default=2)
    a = ap.parse_args()
    os.makedirs(a.out, exist_ok=True)
    preset = "llama3-8b" if a.quick else "llama3-70b"
    base = [f"--cfg=workload/preset:{preset}", "--cfg=sim/progress:no"]
    nodes = "1,2,4" if a.quick else "8,16,32,64,128"
    rows = sweep(a.sim, a.out, "cluster-size", [f"cluster/nodes={nodes}"], base, a.jobs)
    plot(rows, "cluster/nodes", "durable_s", "GPU nodes (8 GPUs each)", "checkpoint durable after (s)",
         f"{preset}: checkpoint write vs cluster size", os.path.join(a.out, "policies_vs_cluster_size.png"), logx=True)
    stripes = "1,4,16" if a.quick else "1,2,4,8,16,32"
    rows = sweep(a.sim, a.out, "stripe-count", [f"fs/stripe-count={stripes}"], base, a.jobs)
    plot(rows, "fs/stripe-count", "durable_s", "stripe count", "checkpoint durable after (s)",
         f"{preset}: checkpoint write vs stripe count", os.path.join(a.out, "ckpt_time_vs_stripe_count.png"), logx=True)
    intervals = "5min,30min,2h" if a.quick else "2min,5min,10min,20min,30min,1h,2h,4h"
    # A failure-prone cluster makes the trade-off visible: 64 nodes, node MTBF 1000 h.
    rows = sweep(a.sim, a.out, "interval", [f"training/interval={intervals}"],
                 base + ["--cfg=cluster/nodes:64", "--cfg=training/node-mtbf:1000h"], a.jobs)
    for r in rows:  # the grid value is text ("30min"): plot against seconds
        v = r["training/interval"]
        r["interval_min"] = float(v[:-3]) if v.endswith("min") else float(v[:-1]) * 60
    plot(rows, "interval_min", "goodput", "checkpoint interval (min)", "goodput (%)",
         f"{preset} on 64 nodes, node MTBF 1000 h: goodput vs interval", os.path.join(a.out, "goodput_vs_interval.png"),
         logx=True, ytrans=lambda s: 100 * float(s))


if __name__ == "__main__":
    main()
