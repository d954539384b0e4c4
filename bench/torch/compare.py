"""torch.save + fsync and cold torch.load, with and without the LD_PRELOAD shim.

Runs checkpoint_once.py alternately without and with the shim, RUNS times each,
and prints GB/s medians (and min/max) side by side, plus a JSON file if asked.
With --baseline-shim, a second build of the shim (another commit's, say) runs
in every round too, rotated with the other two, and its ratios are printed.

Usage: compare.py --shim BUILD/lib/libhybridio_preload.so [--baseline-shim OTHER.so]
                  [--dir DIR] [--size 2G] [--runs 5] [--json FILE]
"""
import argparse
import json
import os
import statistics
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))


def parse_size(text):
    units = {"K": 1 << 10, "M": 1 << 20, "G": 1 << 30}
    return int(float(text[:-1]) * units[text[-1].upper()]) if text[-1].upper() in units else int(text)


def run_once(args, shim, stats_dir):
    env = dict(os.environ)
    if shim:
        env["LD_PRELOAD"] = shim
        env["HYBRIDIO_STATS"] = os.path.join(stats_dir, "stats.%p.json")
    out = subprocess.run([sys.executable, os.path.join(HERE, "checkpoint_once.py"), args.dir, str(args.size)],
                         env=env, capture_output=True, text=True, check=False)
    if out.returncode != 0:
        sys.exit(f"checkpoint_once.py failed ({'under ' + shim if shim else 'without the shim'}):\n{out.stderr}")
    return json.loads(out.stdout.strip().splitlines()[-1])


def direct_share(stats_dir):
    direct = total = 0
    for name in os.listdir(stats_dir):
        with open(os.path.join(stats_dir, name)) as f:
            s = json.load(f)
        for op in ("read", "write"):
            direct += s[op]["direct"]["bytes"]
            total += sum(s[op][p]["bytes"] for p in ("buffered", "direct", "dontcache"))
        os.unlink(os.path.join(stats_dir, name))
    return direct / total if total else 0.0


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--shim", required=True)
    ap.add_argument("--baseline-shim", help="another build of the shim, run in every round too")
    ap.add_argument("--dir", default=".")
    ap.add_argument("--size", type=parse_size, default=parse_size("2G"))
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--json")
    args = ap.parse_args()
    for shim in (args.shim, args.baseline_shim):
        if shim and not os.path.exists(shim):
            sys.exit(f"no shim at {shim}")
    args.shim = os.path.abspath(args.shim)
    shims = {"plain": None, "shim": args.shim}
    if args.baseline_shim:
        shims["baseline"] = os.path.abspath(args.baseline_shim)
    stats_dir = os.path.join(args.dir, f".hybridio-stats.{os.getpid()}")
    os.makedirs(stats_dir, exist_ok=True)
    results = {v: [] for v in shims}
    shares = []
    variants = list(shims)
    for run in range(args.runs):
        for variant in variants[run % len(variants):] + variants[:run % len(variants)]:
            r = run_once(args, shims[variant], stats_dir)
            if not r["identical"]:
                sys.exit("restored state dict differs from the saved one")
            results[variant].append(r)
            if variant == "shim":
                shares.append(direct_share(stats_dir))
            elif variant == "baseline":
                direct_share(stats_dir)  # its stats files, removed
            print(f"run {run + 1}/{args.runs} {variant:5s}: save {r['bytes'] / r['save_s'] / 1e9:5.2f} GB/s, "
                  f"load {r['bytes'] / r['load_s'] / 1e9:5.2f} GB/s ({r['cold']})", file=sys.stderr)
    os.rmdir(stats_dir)

    def gbps(rs, key):
        v = sorted(r["bytes"] / r[key] / 1e9 for r in rs)
        return statistics.median(v), v[0], v[-1]

    size = results["plain"][0]["bytes"]
    print(f"\ntorch.save + fsync / cold torch.load of a {size / (1 << 30):.2f} GiB state dict, "
          f"median (min-max) of {args.runs} runs, interleaved")
    print(f"{'':18s} {'save GB/s':>22s} {'load GB/s':>22s}")
    table = {}
    labels = (("plain", "without the shim"), ("shim", "with the shim"), ("baseline", "baseline shim"))
    for variant, label in (vl for vl in labels if vl[0] in results):
        s, l = gbps(results[variant], "save_s"), gbps(results[variant], "load_s")
        table[variant] = {"save": s, "load": l}
        print(f"{label:18s} {s[0]:8.2f} ({s[1]:.2f}-{s[2]:.2f}) {l[0]:10.2f} ({l[1]:.2f}-{l[2]:.2f})")
    print(f"ratio shim/plain   save x{table['shim']['save'][0] / table['plain']['save'][0]:.2f}, "
          f"load x{table['shim']['load'][0] / table['plain']['load'][0]:.2f}; "
          f"direct share of the shim's bytes {statistics.median(shares) * 100:.0f}%")
    if "baseline" in table:
        print(f"ratio baseline/plain save x{table['baseline']['save'][0] / table['plain']['save'][0]:.2f}, "
              f"load x{table['baseline']['load'][0] / table['plain']['load'][0]:.2f}; "
              f"shim/baseline save x{table['shim']['save'][0] / table['baseline']['save'][0]:.2f}, "
              f"load x{table['shim']['load'][0] / table['baseline']['load'][0]:.2f}")
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"schema": "hybridio-torch-compare/1", "bytes": size, "runs": results, "table": table}, f, indent=1)


if __name__ == "__main__":
    main()
