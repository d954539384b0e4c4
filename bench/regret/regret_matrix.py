#!/usr/bin/env python3
"""The regret matrix: is hybrid ever slower than the best fixed policy?

For every cell - direction (sequential write with fsync, cold sequential read) x request size
(64K, 1M, 4M, 16M, 64M by default) x file size (below and above the dirty-page limit) - one
`hybridio bench` run measures buffered, direct, dontcache and hybrid interleaved (--repeat runs
each, rotated; --repeat-below for the file below the dirty limit, whose passes take half a second
and move by 10-20 % from run to run on a VM), and the cell's regret is hybrid's median GB/s over the
best fixed policy's.  The target is >= 0.95 in every cell.  Beside it, round by round: the median
of hybrid's run over the best fixed policy's run in the same round (the four runs of a round are
adjacent in time; when the machine changes speed between rounds, the medians can fall on
different sides of the change).  With --ceiling, fio's direct=1 ioengine=io_uring iodepth=8 at the
same request size is measured right before the cell (the device ceiling), as context.

Writes OUT/regret.json (every cell, every policy's median/min/max) and OUT/regret.md (the table
docs/performance.md shows).  Needs root for cold reads (drop_caches).  Takes a quiet machine:
about (2 x file sizes x 4 policies x repeat) passes over each file size per request size.

    bench/regret/regret_matrix.py --dir /mnt/nvme/tmp --out matrix-out
    bench/regret/regret_matrix.py --dir /tmp/x --sizes 1M,4M --small 512M --large 6G --repeat 3
    bench/regret/regret_matrix.py --rescore --out matrix-out
"""
import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.normpath(os.path.join(HERE, "..", ".."))
POLICIES = ["buffered", "direct", "dontcache", "hybrid"]
TARGET = 0.95  # hybrid over the best fixed policy, in every cell
UNITS = {"K": 1 << 10, "M": 1 << 20, "G": 1 << 30, "T": 1 << 40}


def parse_size(text):
    text = text.strip().upper().rstrip("B").rstrip("I")
    if text and text[-1] in UNITS:
        return int(float(text[:-1]) * UNITS[text[-1]])
    return int(text)


def format_size(n):
    for unit in "TGMK":
        if n >= UNITS[unit] and n % UNITS[unit] == 0:
            return f"{n // UNITS[unit]}{unit}"
    return str(n)


def dirty_limit_bytes():
    """What the kernel lets be dirty before writers are throttled (vm.dirty_bytes or ratio)."""
    with open("/proc/sys/vm/dirty_bytes") as f:
        dirty_bytes = int(f.read())
    if dirty_bytes:
        return dirty_bytes
    with open("/proc/sys/vm/dirty_ratio") as f:
        ratio = int(f.read())
    with open("/proc/meminfo") as f:
        total_kb = int(next(l for l in f if l.startswith("MemTotal:")).split()[1])
    return total_kb * 1024 // 100 * ratio


def round_to(n, unit):
    return max(unit, n // unit * unit)


def repeats(args, label):
    return args.repeat_below if label == "below" else args.repeat


def run_cell(args, op, bs, file_size, out_dir, label):
    name = f"{label}-{op}-{format_size(bs)}"
    json_path = os.path.join(out_dir, "runs", name + ".json")
    cmd = [args.hybridio, "bench", f"--name={name}", f"--rw={op}", f"--bs={bs}", f"--size={file_size}",
           f"--repeat={repeats(args, label)}", "--policy=" + ",".join(POLICIES), f"--directory={args.dir}",
           f"--json={json_path}"]
    started = time.time()
    done = subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    if done.returncode != 0:
        sys.exit(f"regret_matrix: {' '.join(cmd)} failed ({done.returncode}): {done.stderr.strip()}")
    with open(json_path) as f:
        report = json.load(f)
    cell = {"op": op, "bs": bs, "file_bytes": file_size, "file_class": label, "seconds": time.time() - started,
            "repeat": repeats(args, label), "runs_json": os.path.relpath(json_path, out_dir)}
    return score_cell(cell, report)


def score_cell(cell, report):
    """Fills `cell` from a `hybridio bench` report: each policy's median/min/max and runs, the best
    fixed policy by median, hybrid's median over its median (regret), and the median of hybrid's
    run over that policy's run of the same round (paired: the runs of a round are adjacent in
    time, so a change of the machine's speed between rounds, which this VM has, moves both)."""
    cell["policies"] = {}
    for row in report["results"]:
        if row.get("status", "ok") != "ok":
            continue
        stats = {k: row[k] for k in ("gbps_median", "gbps_min", "gbps_max")}
        stats["runs_gbps"] = [run["gbps"] for run in row.get("runs", [])]
        cell["policies"][row["policy"]] = stats
    fixed = {p: v["gbps_median"] for p, v in cell["policies"].items() if p != "hybrid"}
    if fixed and "hybrid" in cell["policies"]:
        best = max(fixed, key=fixed.get)
        cell["best_fixed"] = best
        cell["regret"] = cell["policies"]["hybrid"]["gbps_median"] / fixed[best]
        hybrid_runs, best_runs = cell["policies"]["hybrid"]["runs_gbps"], cell["policies"][best]["runs_gbps"]
        ratios = [h / b for h, b in zip(hybrid_runs, best_runs) if b > 0]
        if ratios and len(hybrid_runs) == len(best_runs):
            cell["paired_regret"] = statistics.median(ratios)
    return cell


def fio_ceiling(args, op, bs, file_size):
    """fio direct=1 io_uring QD8 at this request size: GB/s, or None without fio."""
    path = os.path.join(args.dir, "regret-ceiling")
    cmd = ["fio", "--name=ceiling", f"--filename={path}", f"--rw={op}", f"--bs={bs}", f"--size={file_size}",
           "--direct=1", "--ioengine=io_uring", "--iodepth=8", "--output-format=json"]
    if op == "write":
        cmd.append("--end_fsync=1")
    else:
        subprocess.run(["sync"], check=False)
        with open("/proc/sys/vm/drop_caches", "w") as f:
            f.write("3")
    done = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    if done.returncode != 0:
        print(f"regret_matrix: fio failed: {done.stderr.strip()}", file=sys.stderr)
        return None
    job = json.loads(done.stdout)["jobs"][0]
    return job["read" if op == "read" else "write"]["bw_bytes"] / 1e9


def format_ratio(ratio):
    """Two decimals, three where two would round a miss up to the target (0.949 is not 0.95)."""
    text = f"{ratio:.2f}"
    return f"{ratio:.3f}" if ratio < TARGET <= float(text) else text


def markdown(cells, meta):
    lines = [f"Regret matrix on {meta['machine']}: hybrid's median GB/s over the best fixed policy's "
             f"(median of {meta['repeat_below']} interleaved runs per policy below the dirty limit, "
             f"{meta['repeat']} above; target >= {TARGET}).", "",
             "| file | op | request | buffered | direct | dontcache | hybrid | best fixed | hybrid / best "
             "| round by round |" + (" fio QD8 ceiling |" if meta["ceiling"] else ""),
             "|---|---|---|---|---|---|---|---|---|---|" + ("---|" if meta["ceiling"] else "")]
    for c in cells:
        med = [f"{c['policies'][p]['gbps_median']:.2f}" if p in c["policies"] else "-" for p in POLICIES]
        regret = c.get("regret")
        mark = "" if regret is None or regret >= TARGET else " **below**"
        row = (f"| {format_size(c['file_bytes'])} ({c['file_class']}) | {c['op']} | {format_size(c['bs'])} | "
               + " | ".join(med) + f" | {c.get('best_fixed', '-')} | "
               + (f"{format_ratio(regret)}{mark}" if regret is not None else "-") + " | "
               + (format_ratio(c["paired_regret"]) if c.get("paired_regret") is not None else "-") + " |")
        if meta["ceiling"]:
            row += f" {c['ceiling_gbps']:.2f} |" if c.get("ceiling_gbps") else " - |"
        lines.append(row)
    met = sum(1 for c in cells if c.get("regret", 0) >= TARGET)
    paired = sum(1 for c in cells if c.get("paired_regret", 0) >= TARGET)
    lines += ["", f"{met} of {len(cells)} cells at >= {TARGET} of the best fixed policy "
              f"({paired} round by round: the median of hybrid's run over that policy's in the same round)."]
    return "\n".join(lines) + "\n"


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--dir", help="directory on the filesystem to measure")
    ap.add_argument("--rescore", action="store_true",
                    help="measure nothing: score the cells of OUT/regret.json again from their runs in OUT/runs "
                         "(a matrix measured before the round-by-round column)")
    ap.add_argument("--out", default=os.path.join(ROOT, "results", "regret"), help="where regret.json/.md go")
    ap.add_argument("--hybridio", default=os.path.join(ROOT, "build", "bin", "hybridio"))
    ap.add_argument("--sizes", default="64K,1M,4M,16M,64M", help="request sizes")
    ap.add_argument("--ops", default="write,read")
    ap.add_argument("--small", help="file below the dirty limit (default: a quarter of it, at most 2G)")
    ap.add_argument("--large", help="file above the dirty limit (default: 1.5x it, clamped to the free space)")
    ap.add_argument("--repeat", type=int, default=5, help="runs per policy and cell")
    ap.add_argument("--repeat-below", type=int, help="runs per policy in the cells below the dirty limit "
                    "(default: 9, at least --repeat)")
    ap.add_argument("--ceiling", action="store_true", help="also measure fio's io_uring QD8 direct ceiling")
    args = ap.parse_args()
    if args.rescore:
        return rescore(args.out)
    if not args.dir:
        ap.error("--dir is required (or --rescore)")
    if args.repeat < 1 or (args.repeat_below is not None and args.repeat_below < 1):
        sys.exit("regret_matrix: --repeat and --repeat-below must be at least 1")
    if args.repeat_below is None:
        args.repeat_below = max(9, args.repeat)
    if not os.path.isdir(args.dir):
        sys.exit(f"regret_matrix: --dir {args.dir} is not a directory")
    if not os.access(args.hybridio, os.X_OK):
        sys.exit(f"regret_matrix: {args.hybridio} not built (./tools/build.sh build)")
    if args.ceiling and not shutil.which("fio"):
        sys.exit("regret_matrix: --ceiling needs fio (apt-get install fio)")
    sizes = [parse_size(s) for s in args.sizes.split(",")]
    largest = max(sizes)
    limit = dirty_limit_bytes()
    stat = os.statvfs(args.dir)
    free = stat.f_bavail * stat.f_frsize
    small = parse_size(args.small) if args.small else min(limit // 4, 2 << 30)
    large = parse_size(args.large) if args.large else min(limit * 3 // 2, free // 10 * 8 - (1 << 30))
    files = [("below", round_to(small, largest)), ("above", round_to(large, largest))]
    if files[1][1] <= limit:
        print(f"regret_matrix: note: the 'above' file ({format_size(files[1][1])}) is not above the dirty limit "
              f"({limit / 2**30:.1f} GiB): not enough free space", file=sys.stderr)
    os.makedirs(os.path.join(args.out, "runs"), exist_ok=True)
    cells = []
    plan = [(label, fsize, op, bs) for label, fsize in files for op in args.ops.split(",") for bs in sizes]
    for i, (label, fsize, op, bs) in enumerate(plan, 1):
        print(f"[{i}/{len(plan)}] {op} {format_size(bs)} requests, {format_size(fsize)} file ({label} the "
              f"dirty limit) ...", file=sys.stderr, flush=True)
        ceiling = fio_ceiling(args, op, bs, fsize) if args.ceiling else None
        cell = run_cell(args, op, bs, fsize, args.out, label)
        cell["ceiling_gbps"] = ceiling
        cells.append(cell)
        regret = cell.get("regret")
        print(f"    hybrid / best fixed ({cell.get('best_fixed')}) = "
              + (format_ratio(regret) if regret is not None else "n/a") + f"  ({cell['seconds']:.0f} s)",
              file=sys.stderr, flush=True)
    if args.ceiling:
        try:
            os.unlink(os.path.join(args.dir, "regret-ceiling"))
        except FileNotFoundError:
            pass
    uname = os.uname()
    meta = {"machine": f"{uname.nodename} ({uname.release}, {os.cpu_count()} CPUs, "
                       f"dirty limit {limit / 2**30:.1f} GiB)",
            "repeat": args.repeat, "repeat_below": args.repeat_below, "ceiling": args.ceiling, "dirty_limit_bytes": limit, "dir": args.dir}
    return write_tables(args.out, cells, meta)


def write_tables(out, cells, meta):
    with open(os.path.join(out, "regret.json"), "w") as f:
        json.dump({"schema": "hybridio-regret/1", "meta": meta, "cells": cells}, f, indent=1)
    table = markdown(cells, meta)
    with open(os.path.join(out, "regret.md"), "w") as f:
        f.write(table)
    print(table)
    return 0 if all(c.get("regret", 0) >= TARGET for c in cells) else 1


def rescore(out):
    try:
        with open(os.path.join(out, "regret.json")) as f:
            matrix = json.load(f)
    except (OSError, ValueError) as e:
        sys.exit(f"regret_matrix: --rescore: cannot read {out}/regret.json: {e}")
    for cell in matrix["cells"]:
        runs = cell.get("runs_json") or os.path.join(
            "runs", f"{cell['file_class']}-{cell['op']}-{format_size(cell['bs'])}.json")
        try:
            with open(os.path.join(out, runs)) as f:
                score_cell(cell, json.load(f))
        except (OSError, ValueError) as e:
            sys.exit(f"regret_matrix: --rescore: cannot read {out}/{runs}: {e}")
    return write_tables(out, matrix["cells"], matrix["meta"])


if __name__ == "__main__":
    sys.exit(main())
