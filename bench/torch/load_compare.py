#!/usr/bin/env python3
"""Cold torch.load alone, each in a new process: plain, and under the shim with each policy.

torch.load's speed on a VM depends on the memory state it finds, so every load runs in a process of its own, from a cold page cache,
with the variants rotated round by round.  --warm-up brings page-cache memory to the same
state before each load first (bench/page_cache.py), as compare.py does; without it a load
finds the memory the previous process left.  The state dict is saved once, without the
shim, as checkpoint_once.py builds it (tensors of 64-256 MiB and small ones); every load is
checked against it by shape and a sample of values.

Prints GB/s per round and the median per variant; --json writes them too.

Usage: load_compare.py --shim BUILD/lib/libhybridio_preload.so [--dir DIR] [--size 2G]
                       [--rounds 5] [--policies hybrid,direct,dontcache] [--warm-up] [--json FILE]
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, ".."))
sys.path.insert(0, HERE)
from compare import parse_size  # noqa: E402  (bench/torch/compare.py, torch-free)
from page_cache import drop_caches, warm_page_cache_memory  # noqa: E402  (bench/page_cache.py)


def load_once(path, warm_up):
    """The child: one timed cold load; prints one JSON line."""
    import torch
    cold = drop_caches(path)
    warm = warm_page_cache_memory(os.path.dirname(path) or ".", os.path.getsize(path)) if warm_up else ""
    t0 = time.perf_counter()
    sd = torch.load(path)
    seconds = time.perf_counter() - t0
    # As checkpoint_once.state_dict() made it: layer i's weight is all i, its bias all -i.
    ok = all(t.numel() > 0 and float(t[0]) == float(t[-1]) == (i if k.endswith("weight") else -i)
             for k, t in sd.items() for i in [int(k[5:k.index(".")])])
    print(json.dumps({"seconds": seconds, "gbps": os.path.getsize(path) / seconds / 1e9, "cold": cold,
                      "warm_up": "off" if not warm_up else (f"failed: {warm}" if warm else "ok"), "identical": ok}))
    return 0 if ok else 1


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--shim", required=True)
    ap.add_argument("--dir", default=".")
    ap.add_argument("--size", type=parse_size, default=parse_size("2G"))
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--policies", default="hybrid,direct,dontcache")
    ap.add_argument("--warm-up", action="store_true")
    ap.add_argument("--json")
    ap.add_argument("--child", help=argparse.SUPPRESS)  # internal: load this file once
    args = ap.parse_args()
    if args.child:
        return load_once(args.child, args.warm_up)
    if not os.path.exists(args.shim):
        sys.exit(f"load_compare: no shim at {args.shim}")
    if args.rounds < 1 or args.size < 1:
        sys.exit("load_compare: --rounds and --size must be positive")
    policies = [p for p in args.policies.split(",") if p]
    for p in policies:
        if p not in ("hybrid", "buffered", "direct", "dontcache"):
            sys.exit(f"load_compare: unknown policy '{p}' (hybrid, buffered, direct, dontcache)")
    variants = ["plain"] + policies
    path = os.path.join(args.dir, f"load-compare.{os.getpid()}.pt")
    import torch
    from checkpoint_once import state_dict  # the same state dict as compare.py's runs
    torch.save(state_dict(args.size), path)
    runs = {v: [] for v in variants}
    try:
        for r in range(args.rounds):
            for k in range(len(variants)):
                v = variants[(k + r) % len(variants)]  # rotated: no variant always loads first
                env = dict(os.environ)
                if v != "plain":
                    env.update(LD_PRELOAD=args.shim, HYBRIDIO_POLICY=v)
                cmd = [sys.executable, os.path.abspath(__file__), "--shim", args.shim, "--child", path]
                out = subprocess.run(cmd + (["--warm-up"] if args.warm_up else []), env=env,
                                     capture_output=True, text=True, check=False)
                if out.returncode != 0:
                    sys.exit(f"load_compare: the {v} load failed:\n{out.stderr}{out.stdout}")
                result = json.loads(out.stdout.strip().splitlines()[-1])
                runs[v].append(result)
                print(f"round {r + 1}/{args.rounds} {v:9s} {result['gbps']:.2f} GB/s ({result['cold']})", flush=True)
    finally:
        os.unlink(path)
    print(f"\ncold torch.load of a {args.size / (1 << 30):.2f} GiB state dict, each in a new process, "
          f"warm-up {'on' if args.warm_up else 'off'}; GB/s median (min-max) of {args.rounds}")
    summary = {}
    for v in variants:
        g = [x["gbps"] for x in runs[v]]
        summary[v] = statistics.median(g)
        print(f"{v:10s} {summary[v]:.2f} ({min(g):.2f}-{max(g):.2f})")
    best = max(policies, key=lambda p: summary[p]) if policies else None
    if best:
        print(f"best under the shim: {best}; against plain x{summary[best] / summary['plain']:.2f}")
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"schema": "hybridio-torch-load-compare/1", "bytes": args.size, "warm_up": args.warm_up,
                       "runs": runs, "median_gbps": summary}, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
