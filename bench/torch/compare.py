"""torch.save + fsync and cold torch.load, with and without the LD_PRELOAD shim.

Runs checkpoint_once.py alternately without and with the shim, RUNS times each,
and prints GB/s medians (and min/max) side by side, plus a JSON file if asked.

Usage: compare.py --shim BUILD/lib/libhybridio_preload.so [--dir DIR] [--size 2G] [--runs 5] [--json FILE]
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


def run_once(args, with_shim, stats_dir):
    env = dict(os.environ)
    if with_shim:
        env["LD_PRELOAD"] = args.shim
        env["HYBRIDIO_STATS"] = os.path.join(stats_dir, "stats.%p.json")
    out = subprocess.run([sys.executable, os.path.join(HERE, "checkpoint_once.py"), args.dir, str(args.size)],
                         env=env, capture_output=True, text=True, check=False)
    if out.returncode != 0:
        sys.exit(f"checkpoint_once.py failed ({'with' if with_shim else 'without'} the shim):\n{out.stderr}")
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
    ap.add_argument("--dir", default=".")
    ap.add_argument("--size", type=parse_size, default=parse_size("2G"))
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--json")
    args = ap.parse_args()
    if not os.path.exists(args.shim):
        sys.exit(f"no shim at {args.shim}")
    stats_dir = os.path.join(args.dir, f".hybridio-stats.{os.getpid()}")
    os.makedirs(stats_dir, exist_ok=True)
    results = {"plain": [], "shim": []}
    shares = []
    for run in range(args.runs):
        for variant in ("plain", "shim") if run % 2 == 0 else ("shim", "plain"):
            r = run_once(args, variant == "shim", stats_dir)
            if not r["identical"]:
                sys.exit("restored state dict differs from the saved one")
            results[variant].append(r)
            if variant == "shim":
                shares.append(direct_share(stats_dir))
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
    for variant, label in (("plain", "without the shim"), ("shim", "with the shim")):
        s, l = gbps(results[variant], "save_s"), gbps(results[variant], "load_s")
        table[variant] = {"save": s, "load": l}
        print(f"{label:18s} {s[0]:8.2f} ({s[1]:.2f}-{s[2]:.2f}) {l[0]:10.2f} ({l[1]:.2f}-{l[2]:.2f})")
    print(f"ratio shim/plain   save x{table['shim']['save'][0] / table['plain']['save'][0]:.2f}, "
          f"load x{table['shim']['load'][0] / table['plain']['load'][0]:.2f}; "
          f"direct share of the shim's bytes {statistics.median(shares) * 100:.0f}%")
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"schema": "hybridio-torch-compare/1", "bytes": size, "runs": results, "table": table}, f, indent=1)


if __name__ == "__main__":
    main()
