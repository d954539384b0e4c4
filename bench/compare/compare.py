#!/usr/bin/python3
"""Side-by-side comparison with real fio and PyTorch, interleaved A/B in one run.

Variants, at every block size (default 64 KiB to 64 MiB), for sequential writes
(end_fsync inside the timing) and cold sequential reads:

  fio_buffered      fio ioengine=psync, buffered
  fio_direct        fio ioengine=psync direct=1
  fio_uring_qd8     fio ioengine=io_uring direct=1 iodepth=8  (the device's ceiling)
  fio_shim_hybrid   fio ioengine=psync, buffered, under the LD_PRELOAD shim (policy hybrid)
  fio_uncached      fio uncached=1 (RWF_DONTCACHE), when this fio has the option

and torch.save + fsync / cold torch.load of a state dict without and with the shim
(bench/torch/checkpoint_once.py).  Every repeat runs every variant, in an order
rotated per repeat.  Before every timed write and read (after the caches are
dropped), page-cache memory is brought to the same state for every variant: a
sparse file of the run's size is read and dropped, untimed (bench/page_cache.py;
--no-warm-up turns it off).  Writes OUT/compare.md (tables), OUT/compare.json (every run,
with fio's own fields), and PNG plots: OUT/gbps_vs_bs.png, OUT/cpu_per_gb.png,
OUT/checkpoint_time.png.

Usage: compare.py --shim BUILD/lib/libhybridio_preload.so [--dir DIR] [--out DIR]
                  [--size 4G] [--bs 64K,256K,1M,4M,16M,64M] [--runs 3]
                  [--torch-size 2G] [--no-torch] [--no-warm-up] [--quick]
       compare.py plot --out FILE.svg JSON...
                  (SVG plots of regret.json and `hybridio bench train` reports: plot.py)
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, ".."))
from page_cache import drop_caches, warm_page_cache_memory  # noqa: E402  (bench/page_cache.py, shared with bench/torch/)

TORCH_ONCE = os.path.join(HERE, "..", "torch", "checkpoint_once.py")
SCHEMA = "hybridio-compare/1"

FIO_VARIANTS = [
    # name, label, fio options, under the shim
    ("fio_buffered", "fio buffered psync", ["--ioengine=psync"], False),
    ("fio_direct", "fio direct psync", ["--ioengine=psync", "--direct=1"], False),
    ("fio_uring_qd8", "fio direct io_uring qd8 (ceiling)", ["--ioengine=io_uring", "--direct=1", "--iodepth=8"], False),
    ("fio_shim_hybrid", "fio buffered + shim (hybrid)", ["--ioengine=psync"], True),
    ("fio_uncached", "fio uncached=1 (RWF_DONTCACHE)", ["--ioengine=psync", "--uncached=1"], False),
]


def parse_size(text):
    units = {"K": 1 << 10, "M": 1 << 20, "G": 1 << 30, "T": 1 << 40}
    t = text.strip().upper().removesuffix("IB").removesuffix("B")
    return int(float(t[:-1]) * units[t[-1]]) if t and t[-1] in units else int(t)


def human(n):
    for unit, div in (("G", 1 << 30), ("M", 1 << 20), ("K", 1 << 10)):
        if n >= div and n % div == 0:
            return f"{n // div}{unit}"
    return str(n)


def log(msg):
    print(msg, file=sys.stderr, flush=True)


def run_measured(cmd, env, out_path=None):
    """Runs cmd; returns (wall seconds, user+sys CPU seconds of the child, returncode, stderr)."""
    err = tempfile.TemporaryFile()
    t0 = time.perf_counter()
    p = subprocess.Popen(cmd, env=env, stdout=subprocess.DEVNULL, stderr=err)
    _, status, ru = os.wait4(p.pid, 0)
    wall = time.perf_counter() - t0
    p.returncode = os.waitstatus_to_exitcode(status)
    err.seek(0)
    return wall, ru.ru_utime, ru.ru_stime, p.returncode, err.read().decode(errors="replace")


def fio_has_option(fio, name):
    out = subprocess.run([fio, f"--cmdhelp={name}"], capture_output=True, text=True)
    return out.returncode == 0 and "No such command" not in out.stdout + out.stderr


def shim_env(args, stats_path):
    env = dict(os.environ)
    env["LD_PRELOAD"] = os.path.abspath(args.shim)
    env["HYBRIDIO_POLICY"] = "hybrid"
    env["HYBRIDIO_STATS"] = stats_path
    return env


def direct_share(stats_path, op):
    try:
        with open(stats_path) as f:
            s = json.load(f)
        os.unlink(stats_path)
    except (OSError, ValueError):
        return None
    total = sum(s[op][p]["bytes"] for p in ("buffered", "direct", "dontcache"))
    return s[op]["direct"]["bytes"] / total if total else 0.0


def fio_run(args, variant, rw, bs, path, scratch):
    name, _, opts, shim = variant
    out_json = os.path.join(scratch, "fio.json")
    stats = os.path.join(scratch, "stats.json")
    cmd = [args.fio, "--name=cmp", f"--filename={path}", f"--rw={rw}", f"--bs={bs}", f"--size={args.size}",
           "--output-format=json", f"--output={out_json}", "--thread=0"] + opts
    if rw == "write":
        cmd += ["--end_fsync=1", "--create_on_open=1"]
    env = shim_env(args, stats) if shim else dict(os.environ)
    if rw == "write" and os.path.exists(path):
        os.unlink(path)
    cold = drop_caches(path) if rw == "read" else "n/a"
    warm = "off" if args.no_warm_up else (warm_page_cache_memory(scratch, args.size) or "ok")
    wall, usr, sys_s, rc, err = run_measured(cmd, env)
    if rc != 0:
        return {"status": "failed", "reason": f"fio exited {rc}: {err.strip()[-300:]}"}
    with open(out_json) as f:
        doc = json.load(f)
    job = doc["jobs"][0][rw]
    # Writes: bytes over the whole command's wall time, because fio's own
    # bandwidth leaves out end_fsync; reads: fio's bw_bytes (cold file).
    nbytes = job["io_bytes"]
    gbps = nbytes / wall / 1e9 if rw == "write" else job["bw_bytes"] / 1e9
    pct = job.get("clat_ns", {}).get("percentile", {})
    r = {"status": "ok", "bytes": nbytes, "gbps": gbps, "fio_bw_bytes": job["bw_bytes"], "iops": job["iops"],
         "fio_runtime_ms": job["runtime"], "wall_s": wall, "usr_s": usr, "sys_s": sys_s,
         # fio's own CPU figures (percent of the job's runtime): process start-up left out.
         "cpu_s_per_gb": ((doc["jobs"][0]["usr_cpu"] + doc["jobs"][0]["sys_cpu"]) / 100 * job["runtime"] / 1e3
                          / (nbytes / 1e9)) if nbytes else None,
         "process_cpu_s": usr + sys_s,
         "fio_usr_cpu": doc["jobs"][0]["usr_cpu"], "fio_sys_cpu": doc["jobs"][0]["sys_cpu"],
         "clat_p50_ns": pct.get("50.000000"), "clat_p99_ns": pct.get("99.000000"),
         "clat_p99_9_ns": pct.get("99.900000"), "cold": cold, "warm_up": warm}
    if shim:
        r["direct_share"] = direct_share(stats, rw)
    return r


def torch_run(args, with_shim, scratch):
    stats = os.path.join(scratch, "torch-stats.%p.json")
    env = shim_env(args, stats) if with_shim else dict(os.environ)
    cmd = ["/usr/bin/python3", TORCH_ONCE, args.dir, str(args.torch_size)] + (["--no-warm-up"] if args.no_warm_up else [])
    out = subprocess.run(cmd, env=env, capture_output=True, text=True)
    if out.returncode != 0:
        return {"status": "failed", "reason": out.stderr.strip()[-300:]}
    for f in os.listdir(scratch):
        if f.startswith("torch-stats."):
            os.unlink(os.path.join(scratch, f))
    r = json.loads(out.stdout.strip().splitlines()[-1])
    r["status"] = "ok" if r["identical"] else "failed"
    return r


def stats3(values):
    v = sorted(x for x in values if x is not None)
    if not v:
        return None
    return {"median": statistics.median(v), "min": v[0], "max": v[-1], "n": len(v)}


def summarize(results):
    """Per (rw, variant, bs): median/min/max of GB/s and CPU s/GB."""
    table = {}
    for key, runs in results.items():
        ok = [r for r in runs if r.get("status") == "ok"]
        if not ok:
            table[key] = {"status": runs[0].get("status", "skipped"), "reason": runs[0].get("reason", "")}
            continue
        table[key] = {"status": "ok", "gbps": stats3([r["gbps"] for r in ok]),
                      "cpu_s_per_gb": stats3([r.get("cpu_s_per_gb") for r in ok]),
                      "clat_p99_ns": stats3([r.get("clat_p99_ns") for r in ok]),
                      "direct_share": stats3([r.get("direct_share") for r in ok])}
    return table


def markdown(args, machine, summary, torch_summary, variants, sizes):
    lines = [f"# fio and PyTorch, with and without Hybrid-IO\n",
             f"{machine}. File {human(args.size)} per fio run (writes: end_fsync inside the time; reads: "
             f"cold, caches dropped first); "
             + ("no page-cache memory warm-up; " if args.no_warm_up else
                "before every run, untimed, the same page-cache memory state for every variant (a sparse "
                "file of the run's size read and dropped); ")
             + f"median [min-max] of {args.runs} interleaved runs; GB/s = 10^9 B/s.\n"]
    for rw in ("write", "read"):
        lines.append(f"\n## Sequential {rw}s, GB/s\n")
        lines.append("| variant | " + " | ".join(human(b) for b in sizes) + " |")
        lines.append("|---|" + "---|" * len(sizes))
        for name, label, _, _ in variants:
            cells = []
            for bs in sizes:
                s = summary[f"{rw}/{name}/{bs}"]
                if s["status"] != "ok":
                    cells.append(f"skipped: {s['reason']}" if bs == sizes[0] else "-")
                else:
                    g = s["gbps"]
                    cells.append(f"{g['median']:.2f} [{g['min']:.2f}-{g['max']:.2f}]")
            lines.append(f"| {label} | " + " | ".join(cells) + " |")
        lines.append(f"\nCPU seconds per GB (fio's usr_cpu + sys_cpu over its runtime), {rw}s:\n")
        lines.append("| variant | " + " | ".join(human(b) for b in sizes) + " |")
        lines.append("|---|" + "---|" * len(sizes))
        for name, label, _, _ in variants:
            cells = []
            for bs in sizes:
                s = summary[f"{rw}/{name}/{bs}"]
                cells.append(f"{s['cpu_s_per_gb']['median']:.3f}" if s["status"] == "ok" and s["cpu_s_per_gb"] else "-")
            lines.append(f"| {label} | " + " | ".join(cells) + " |")
    if torch_summary:
        lines.append("\n## torch.save + fsync, cold torch.load\n")
        lines.append("| variant | bytes | save s | save GB/s | load s | load GB/s |")
        lines.append("|---|---|---|---|---|---|")
        for v, label in (("plain", "torch, no shim"), ("shim", "torch + shim (hybrid)")):
            t = torch_summary.get(v)
            if not t or t.get("status") != "ok":
                lines.append(f"| {label} | skipped: {t.get('reason', '') if t else ''} | | | | |")
                continue
            lines.append(f"| {label} | {t['bytes'] / (1 << 30):.2f} GiB | {t['save_s']['median']:.2f} | "
                         f"{t['bytes'] / t['save_s']['median'] / 1e9:.2f} | {t['load_s']['median']:.2f} | "
                         f"{t['bytes'] / t['load_s']['median'] / 1e9:.2f} |")
    return "\n".join(lines) + "\n"


def plots(out, summary, torch_summary, variants, sizes):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    files = []
    for metric, ylabel, fname in (("gbps", "GB/s (median, bars: min-max)", "gbps_vs_bs.png"),
                                  ("cpu_s_per_gb", "CPU s per GB (median)", "cpu_per_gb.png")):
        fig, axes = plt.subplots(1, 2, figsize=(11, 4.2), sharex=True)
        for ax, rw in zip(axes, ("write", "read")):
            for name, label, _, _ in variants:
                xs, ys, lo, hi = [], [], [], []
                for bs in sizes:
                    s = summary[f"{rw}/{name}/{bs}"]
                    if s["status"] == "ok" and s[metric]:
                        xs.append(bs / 1024)
                        ys.append(s[metric]["median"])
                        lo.append(s[metric]["median"] - s[metric]["min"])
                        hi.append(s[metric]["max"] - s[metric]["median"])
                if xs:
                    ax.errorbar(xs, ys, yerr=[lo, hi], marker="o", capsize=3, label=label)
            ax.set_xscale("log", base=2)
            ax.set_xlabel("block size (KiB)")
            ax.set_ylabel(ylabel)
            ax.set_title(f"sequential {rw}" + (" (end_fsync timed)" if rw == "write" else " (cold)"))
            ax.grid(True, alpha=0.3)
        axes[0].legend(fontsize=7)
        fig.tight_layout()
        fig.savefig(os.path.join(out, fname), dpi=90)
        plt.close(fig)
        files.append(fname)
    if torch_summary and all(torch_summary.get(v, {}).get("status") == "ok" for v in ("plain", "shim")):
        fig, ax = plt.subplots(figsize=(6, 4))
        labels = ["torch.save + fsync", "cold torch.load"]
        for i, (v, label) in enumerate((("plain", "no shim"), ("shim", "shim (hybrid)"))):
            t = torch_summary[v]
            med = [t["save_s"]["median"], t["load_s"]["median"]]
            err = [[med[0] - t["save_s"]["min"], med[1] - t["load_s"]["min"]],
                   [t["save_s"]["max"] - med[0], t["load_s"]["max"] - med[1]]]
            ax.bar([x + i * 0.38 for x in range(2)], med, 0.38, yerr=err, capsize=4, label=label)
        ax.set_xticks([x + 0.19 for x in range(2)], labels)
        ax.set_ylabel(f"seconds for {torch_summary['plain']['bytes'] / (1 << 30):.2f} GiB (median, bars: min-max)")
        ax.set_title("checkpoint time per policy (lower is better)")
        ax.legend()
        fig.tight_layout()
        fig.savefig(os.path.join(out, "checkpoint_time.png"), dpi=90)
        plt.close(fig)
        files.append("checkpoint_time.png")
    return files


def machine_line(directory):
    kernel = os.uname().release
    fs = "?"
    real = os.path.realpath(directory)
    best = ""
    with open("/proc/self/mounts") as f:
        for line in f:
            dev, mnt, typ, opts = line.split()[:4]
            if (real == mnt or real.startswith(mnt.rstrip("/") + "/")) and len(mnt) >= len(best):
                best, fs = mnt, f"{typ} ({opts}) on {dev}"
    mem = os.sysconf("SC_PHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")
    return f"{fs}, Linux {kernel}, {os.cpu_count()} CPUs, {mem / (1 << 30):.1f} GiB RAM"


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--shim", required=True, help="libhybridio_preload.so")
    ap.add_argument("--fio", default="fio")
    ap.add_argument("--dir", default=".", help="where the test files go")
    ap.add_argument("--out", default="compare-out", help="where the table, JSON and plots go")
    ap.add_argument("--size", type=parse_size, default=None, help="file size per fio run (default 4G; --quick 32M)")
    ap.add_argument("--bs", default=None, help="block sizes (default 64K,256K,1M,4M,16M,64M)")
    ap.add_argument("--runs", type=int, default=None, help="repeats, interleaved (default 3; --quick 1)")
    ap.add_argument("--torch-size", type=parse_size, default=None, help="state dict bytes (default 2G; --quick 32M)")
    ap.add_argument("--no-torch", action="store_true")
    ap.add_argument("--no-warm-up", action="store_true",
                    help="skip the untimed page-cache memory warm-up before every timed run (docs/bench.md)")
    ap.add_argument("--quick", action="store_true", help="small sizes, one run: a test, not a measurement")
    args = ap.parse_args()
    q = args.quick
    args.size = args.size or parse_size("32M" if q else "4G")
    args.bs = args.bs or ("64K,1M,16M" if q else "64K,256K,1M,4M,16M,64M")
    args.runs = args.runs or (1 if q else 3)
    args.torch_size = args.torch_size or parse_size("32M" if q else "2G")
    sizes = [parse_size(b) for b in args.bs.split(",")]
    if any(b > args.size for b in sizes):
        sys.exit(f"compare.py: a block size is larger than --size {human(args.size)}")
    if not os.path.exists(args.shim):
        sys.exit(f"compare.py: no shim at {args.shim}")
    if not os.path.isdir(args.dir):
        sys.exit(f"compare.py: {args.dir} is not a directory")
    try:
        fio_version = subprocess.run([args.fio, "--version"], capture_output=True, text=True).stdout.strip()
    except OSError:
        print(f"compare.py: cannot run {args.fio}: skipped", file=sys.stderr)
        sys.exit(77)  # ctest SKIP_RETURN_CODE
    os.makedirs(args.out, exist_ok=True)
    scratch = tempfile.mkdtemp(prefix=".hybridio-compare.", dir=args.dir)
    path = os.path.join(scratch, "fio.dat")

    skip = {}
    if not fio_has_option(args.fio, "uncached"):
        skip["fio_uncached"] = f"{fio_version} has no uncached option"
    results = {f"{rw}/{v[0]}/{bs}": [] for rw in ("write", "read") for v in FIO_VARIANTS for bs in sizes}
    for key in results:
        name = key.split("/")[1]
        if name in skip:
            results[key].append({"status": "skipped", "reason": skip[name]})
    live = [v for v in FIO_VARIANTS if v[0] not in skip]
    torch_runs = {"plain": [], "shim": []}
    do_torch = not args.no_torch
    torch_skip = None
    if do_torch and subprocess.run(["/usr/bin/python3", "-c", "import torch"], capture_output=True).returncode != 0:
        do_torch, torch_skip = False, "/usr/bin/python3 has no torch"

    t_start = time.time()
    for rep in range(args.runs):
        for rw in ("write", "read"):
            if rw == "read":  # one file for every read variant and block size, written untimed
                subprocess.run([args.fio, "--name=layout", f"--filename={path}", "--rw=write", "--bs=1M",
                                f"--size={args.size}", "--direct=1", "--end_fsync=1"], capture_output=True, check=True)
            for bs in sizes:
                order = live[rep % len(live):] + live[:rep % len(live)]  # rotate per repeat
                for v in order:
                    r = fio_run(args, v, rw, bs, path, scratch)
                    results[f"{rw}/{v[0]}/{bs}"].append(r)
                    g = f"{r['gbps']:.2f} GB/s" if r["status"] == "ok" else r["status"] + ": " + r["reason"]
                    log(f"run {rep + 1}/{args.runs} {rw:5s} bs={human(bs):>4s} {v[0]:16s} {g}")
        if do_torch:
            for variant in (("plain", "shim") if rep % 2 == 0 else ("shim", "plain")):
                r = torch_run(args, variant == "shim", scratch)
                torch_runs[variant].append(r)
                if r["status"] == "ok":
                    log(f"run {rep + 1}/{args.runs} torch {variant:5s}: save {r['bytes'] / r['save_s'] / 1e9:.2f} GB/s, "
                        f"load {r['bytes'] / r['load_s'] / 1e9:.2f} GB/s ({r['cold']})")
                else:
                    log(f"torch {variant} failed: {r['reason']}")
    for f in os.listdir(scratch):
        os.unlink(os.path.join(scratch, f))
    os.rmdir(scratch)

    summary = summarize(results)
    torch_summary = {}
    for v, runs in torch_runs.items():
        ok = [r for r in runs if r["status"] == "ok"]
        if ok:
            torch_summary[v] = {"status": "ok", "bytes": ok[0]["bytes"], "save_s": stats3([r["save_s"] for r in ok]),
                                "load_s": stats3([r["load_s"] for r in ok]), "cold": ok[0]["cold"]}
        else:
            reason = torch_skip or (runs[0]["reason"] if runs else "not run (--no-torch)")
            torch_summary[v] = {"status": "skipped" if not runs else "failed", "reason": reason}
    machine = machine_line(args.dir)
    md = markdown(args, machine, summary, torch_summary, FIO_VARIANTS, sizes)
    with open(os.path.join(args.out, "compare.md"), "w") as f:
        f.write(md)
    pngs = plots(args.out, summary, torch_summary, FIO_VARIANTS, sizes)
    doc = {"schema": SCHEMA, "machine": machine, "fio": fio_version, "settings": {
        "size": args.size, "bs": sizes, "runs": args.runs, "torch_size": args.torch_size, "quick": q,
        "warm_up": not args.no_warm_up,
        "dir": os.path.abspath(args.dir), "shim": os.path.abspath(args.shim)},
        "variants": [{"name": v[0], "label": v[1], "fio_options": v[2], "shim": v[3]} for v in FIO_VARIANTS],
        "summary": summary, "torch": torch_summary, "runs": results, "torch_runs": torch_runs,
        "plots": pngs, "seconds": time.time() - t_start}
    with open(os.path.join(args.out, "compare.json"), "w") as f:
        json.dump(doc, f, indent=1)
    print(md)
    print(f"wrote {args.out}/compare.md, compare.json, " + ", ".join(pngs))
    failed = [k for k, s in summary.items() if s["status"] == "failed"]
    failed += [f"torch/{v}" for v, t in torch_summary.items() if t.get("status") == "failed"]
    if failed:
        log("failed: " + ", ".join(failed))
        return 1
    return 0


if __name__ == "__main__":
    if sys.argv[1:2] == ["plot"]:
        import plot  # bench/compare/plot.py
        sys.exit(plot.main(sys.argv[2:]))
    sys.exit(main())
