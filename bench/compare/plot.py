"""Plots of the bench's JSON reports as SVG, for docs/performance.md.

    compare.py plot --out FILE.svg JSON...

What is plotted follows the reports' schema (all of one kind per call):

  hybridio-regret/1 (bench/regret/regret_matrix.py's regret.json; a write matrix
      and a read matrix may be given together): GB/s against request size, one
      panel per direction and file size against the dirty limit, a line per
      policy (median, bars min-max) and fio's QD8 direct ceiling where measured;
  hybridio-bench/1 of kind "train" (`hybridio bench train --json`): GB/s per
      epoch, a bar per policy (median, bars min-max) with the epoch's page-cache
      hit rate above it, one panel per report.

Needs matplotlib (Debian: python3-matplotlib); without it, exits 77 saying so.
The SVG carries no date and fixed ids, so the same JSON makes the same file.
"""
import json
import os
import sys

POLICIES = ("buffered", "direct", "dontcache", "hybrid")
COLOURS = {"buffered": "tab:blue", "direct": "tab:orange", "dontcache": "tab:green", "hybrid": "tab:red"}


def human(n):
    for unit, div in (("G", 1 << 30), ("M", 1 << 20), ("K", 1 << 10)):
        if n >= div and n % div == 0:
            return f"{n // div}{unit}"
    return f"{n / (1 << 30):.2f}G" if n >= 1 << 30 else str(n)


def kind(doc):
    if doc.get("schema") == "hybridio-regret/1":
        return "regret"
    if doc.get("schema") == "hybridio-bench/1" and doc.get("kind") == "train":
        return "train"
    return None


def plot_regret(plt, docs):
    cells = [c for doc in docs for c in doc["cells"]]
    ops = [op for op in ("write", "read") if any(c["op"] == op for c in cells)]
    classes = [k for k in ("below", "above") if any(c["file_class"] == k for c in cells)]
    fig, axes = plt.subplots(len(ops), len(classes), figsize=(5.2 * len(classes), 3.6 * len(ops)),
                             squeeze=False)
    for row, op in enumerate(ops):
        for col, file_class in enumerate(classes):
            ax = axes[row][col]
            mine = sorted((c for c in cells if c["op"] == op and c["file_class"] == file_class),
                          key=lambda c: c["bs"])
            xs = [c["bs"] for c in mine]
            for policy in POLICIES:
                ys = [c["policies"][policy]["gbps_median"] for c in mine]
                lo = [y - c["policies"][policy]["gbps_min"] for y, c in zip(ys, mine)]
                hi = [c["policies"][policy]["gbps_max"] - y for y, c in zip(ys, mine)]
                ax.errorbar(xs, ys, yerr=[lo, hi], marker="o", capsize=3, color=COLOURS[policy],
                            linewidth=2.5 if policy == "hybrid" else 1.2, label=policy)
            ceiling = [(c["bs"], c["ceiling_gbps"]) for c in mine if c.get("ceiling_gbps")]
            if ceiling:
                ax.plot([x for x, _ in ceiling], [y for _, y in ceiling], "k--", marker="s",
                        label="fio QD8 direct (ceiling)")
            size = human(mine[0]["file_bytes"]) if mine else ""
            ax.set_title(f"{op}, {size} file ({file_class} the dirty limit)")
            ax.set_xscale("log", base=2)
            ax.set_xticks(xs, [human(x) for x in xs])
            ax.set_xlabel("request size")
            ax.set_ylabel("GB/s (median, bars min-max)")
            ax.set_ylim(bottom=0)
            ax.grid(True, alpha=0.3)
    axes[0][0].legend(fontsize=7)
    fig.suptitle("hybrid against each fixed policy and the device ceiling", fontsize=11)
    return fig


def plot_train(plt, docs):
    fig, axes = plt.subplots(1, len(docs), figsize=(5.6 * len(docs), 3.8), squeeze=False)
    for ax, doc in zip(axes[0], docs):
        t = doc["train"]
        policies = [p for p in t["policies"] if p.get("status") == "ok"]
        width = 0.8 / max(1, len(policies))
        for i, p in enumerate(policies):
            epochs = p["epochs"]
            xs = [e["epoch"] + (i - (len(policies) - 1) / 2) * width for e in epochs]
            ys = [e["gbps_median"] for e in epochs]
            err = [[y - e["gbps_min"] for y, e in zip(ys, epochs)], [e["gbps_max"] - y for y, e in zip(ys, epochs)]]
            ax.bar(xs, ys, width, yerr=err, capsize=2, color=COLOURS.get(p["policy"]), label=p["policy"])
            for x, y, e in zip(xs, ys, epochs):
                if e.get("hit_rate_median", 0) >= 0.005:
                    ax.text(x, y + 0.2, f"{e['hit_rate_median'] * 100:.0f}%", ha="center", va="bottom", fontsize=6)
        budget = "memory limit" if t.get("memory_budget_is") == "memory_limit" else "MemAvailable"
        ax.set_title(f"{t['files']} files x {t['file_bytes'] / (1 << 20):.1f} MiB = {t['dataset_bytes'] / (1 << 30):.2f} GiB, "
                     f"{t['dataset_x_budget']:.2f} x the budget ({budget})", fontsize=9)
        ax.set_xticks(range(1, t["epochs"] + 1), [f"epoch {e}" for e in range(1, t["epochs"] + 1)])
        ax.set_ylabel("GB/s (median, bars min-max)")
        ax.grid(True, axis="y", alpha=0.3)
    axes[0][0].legend(fontsize=7)
    fig.suptitle("training workload: GB/s per epoch (above a bar: its page-cache hit rate)", fontsize=11)
    return fig


def main(argv):
    import argparse
    ap = argparse.ArgumentParser(prog="compare.py plot", description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", required=True, help="the SVG to write")
    ap.add_argument("json", nargs="+", help="regret.json files, or `hybridio bench train` reports")
    args = ap.parse_args(argv)
    docs = []
    for path in args.json:
        with open(path) as f:
            docs.append(json.load(f))
    kinds = {kind(d) for d in docs}
    if None in kinds or len(kinds) != 1:
        print("compare.py plot: give regret.json files (hybridio-regret/1) or bench train reports "
              "(hybridio-bench/1, kind train), not a mix", file=sys.stderr)
        return 2
    try:
        import matplotlib
    except ImportError:
        print("compare.py plot: skipped: no matplotlib (Debian: apt-get install python3-matplotlib)", file=sys.stderr)
        return 77
    matplotlib.use("Agg")
    matplotlib.rcParams["svg.hashsalt"] = "hybridio"  # fixed ids: the same JSON makes the same SVG
    import matplotlib.pyplot as plt
    fig = (plot_regret if kinds == {"regret"} else plot_train)(plt, docs)
    fig.tight_layout()
    os.makedirs(os.path.dirname(os.path.abspath(args.out)), exist_ok=True)
    fig.savefig(args.out, format="svg", metadata={"Date": None})
    plt.close(fig)
    print(f"wrote {args.out}")
    return 0
