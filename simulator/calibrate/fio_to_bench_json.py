#!/usr/bin/env python3
"""Run small fio jobs on this machine and write them as a hybridio-bench/1 JSON.

Stand-in for `hybridio bench --json` until that exists: buffered (direct=0, end_fsync=1 for
writes, page cache of the file invalidated before reads) and direct (direct=1) sequential
writes and reads, one thread, queue depth 1 (psync), at several block sizes. Each point is run
--reps times and the median throughput is kept. Keep --size small: the file is written and
read once per point and repetition.
"""
import argparse
import json
import os
import platform
import shutil
import statistics
import subprocess
import sys
import tempfile


def parse_size(text):
    units = {"k": 1 << 10, "m": 1 << 20, "g": 1 << 30}
    text = text.strip().lower().rstrip("ib")
    if text and text[-1] in units:
        return int(float(text[:-1]) * units[text[-1]])
    return int(text)


def run_fio(path, rw, direct, bs, size):
    cmd = ["fio", "--name=cal", f"--filename={path}", f"--rw={rw}", f"--bs={bs}",
           f"--size={size}", f"--direct={1 if direct else 0}", "--ioengine=psync",
           "--iodepth=1", "--numjobs=1", "--invalidate=1", "--output-format=json"]
    if rw == "write":
        cmd.append("--end_fsync=1")
    out = subprocess.run(cmd, check=True, capture_output=True, text=True).stdout
    # fio may print warnings before the JSON document.
    job = json.loads(out[out.index("{"):])["jobs"][0]
    part = job["write" if rw == "write" else "read"]
    # bw_bytes excludes the end_fsync time; bytes / job runtime includes it.
    runtime_s = job["job_runtime"] / 1000.0 if job.get("job_runtime") else part["runtime"] / 1000.0
    return part["io_bytes"] / runtime_s / 1e9


def main():
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--dir", default=None, help="directory for the test file (default: a temp dir)")
    ap.add_argument("--size", default="64M", help="bytes per fio job (default 64M)")
    ap.add_argument("--block-sizes", default="4k,16k,64k,256k,1m,4m,16m")
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--out", required=True, help="output JSON path")
    args = ap.parse_args()
    if shutil.which("fio") is None:
        sys.exit("fio_to_bench_json: fio not found (apt-get install fio)")
    size = parse_size(args.size)
    workdir = args.dir or tempfile.mkdtemp(prefix="hio-cal-", dir=os.getcwd())
    path = os.path.join(workdir, "fio-cal.dat")
    results = []
    try:
        for bs_text in args.block_sizes.split(","):
            bs = parse_size(bs_text)
            for policy, direct in (("buffered", False), ("direct", True)):
                for rw in ("write", "read"):
                    samples = [run_fio(path, rw, direct, bs, size) for _ in range(args.reps)]
                    results.append({"rw": rw, "policy": policy, "bs_bytes": bs,
                                    "gbps_median": statistics.median(samples),
                                    "gbps_min": min(samples), "gbps_max": max(samples),
                                    "reps": args.reps, "bytes": size})
                    print(f"{rw:5} {policy:8} bs={bs:>9} {results[-1]['gbps_median']:.3f} GB/s",
                          file=sys.stderr)
    finally:
        if os.path.exists(path):
            os.unlink(path)
        if args.dir is None:
            shutil.rmtree(workdir, ignore_errors=True)
    doc = {"schema": "hybridio-bench/1",
           "machine": {"tool": "fio " + subprocess.run(["fio", "--version"], capture_output=True,
                                                         text=True).stdout.strip(),
                       "kernel": platform.release(), "host": platform.node(),
                       "ioengine": "psync", "iodepth": 1, "threads": 1, "file_bytes": size},
           "results": results}
    with open(args.out, "w") as f:
        json.dump(doc, f, indent=1)
        f.write("\n")


if __name__ == "__main__":
    main()
