#!/usr/bin/env python3
"""uncached_run_probe - what an explored uncached run of writes costs inside a
buffered stream against the same run inside an uncached stream.

The learner measures the uncached path of a write class by runs of it
(16 MiB) in the stream of the path in use.  This times, with plain system
calls (no library), a run of RUN bytes of BS writes at offset AT of a new
file of SIZE bytes (one fsync at its end), the rest of the file written:
  buffered  through the page cache: the run is what hybrid explores;
  synced    the same, with an fdatasync right before the run (no dirty
            pages of the stream behind it);
  uncached  RWF_DONTCACHE: the run is what the uncached path costs in use.
The run's writes are RWF_DONTCACHE in all three.  Variants are interleaved,
caches dropped before each (root: /proc/sys/vm/drop_caches).  Prints, per
variant, the median and spread of the run's ns/byte and of the whole file's
(fsync included).  Exits 77 where the kernel has no RWF_DONTCACHE (Linux
6.14+).
"""
import argparse
import errno
import os
import statistics
import sys
import time

BENCH = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")
sys.path.insert(0, BENCH)
sys.path.insert(0, os.path.join(BENCH, "torch"))
from page_cache import drop_caches  # noqa: E402  (bench/page_cache.py)
from fresh_memory_probe import RWF_DONTCACHE  # noqa: E402  (bench/torch, torch-free)
from regret_matrix import parse_size  # noqa: E402  (beside this file)

VARIANTS = ("buffered", "synced", "uncached")


def write_file(path, variant, args, buf):
    """Writes the file as `variant` says; returns (run ns/byte, file ns/byte)."""
    drop_caches(path if os.path.exists(path) else None)
    if os.path.exists(path):
        os.unlink(path)
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
    try:
        stream_flags = RWF_DONTCACHE if variant == "uncached" else 0
        run_ns = 0
        started = time.perf_counter_ns()
        for offset in range(0, args.size, args.bs):
            in_run = args.at <= offset < args.at + args.run
            if in_run and offset == args.at and variant == "synced":
                os.fdatasync(fd)
            call_started = time.perf_counter_ns()
            if os.pwritev(fd, [buf], offset, RWF_DONTCACHE if in_run else stream_flags) != args.bs:
                sys.exit("uncached_run_probe: short write")
            if in_run:
                run_ns += time.perf_counter_ns() - call_started
        os.fsync(fd)
        total_ns = time.perf_counter_ns() - started
    finally:
        os.close(fd)
    return run_ns / args.run, total_ns / args.size


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--dir", required=True, help="directory on the filesystem to measure")
    ap.add_argument("--size", default="1152M", help="file size (default 1152M: below the dirty limit here)")
    ap.add_argument("--bs", default="64K", help="write size (default 64K)")
    ap.add_argument("--run", default="16M", help="the explored run's bytes (default 16M, explore_run_bytes)")
    ap.add_argument("--at", default="512M", help="where the run starts (default 512M)")
    ap.add_argument("--trials", type=int, default=8, help="files per variant (default 8)")
    args = ap.parse_args()
    args.size, args.bs, args.run, args.at = (parse_size(x) for x in (args.size, args.bs, args.run, args.at))
    if args.bs <= 0 or args.size % args.bs or args.run % args.bs or args.at % args.bs:
        sys.exit("uncached_run_probe: --size, --run and --at must be multiples of --bs")
    if args.at + args.run > args.size or args.trials < 1:
        sys.exit("uncached_run_probe: the run must fit in the file, and --trials be at least 1")
    path = os.path.join(args.dir, "uncached_run_probe.dat")
    buf = bytearray(os.urandom(args.bs))
    try:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
        try:
            os.pwritev(fd, [buf], 0, RWF_DONTCACHE)
        finally:
            os.close(fd)
    except OSError as e:
        if e.errno in (errno.EOPNOTSUPP, errno.EINVAL):
            print("uncached_run_probe: skipped: no RWF_DONTCACHE writes here (Linux 6.14+)")
            sys.exit(77)
        raise
    runs = {v: [] for v in VARIANTS}
    files = {v: [] for v in VARIANTS}
    try:
        for trial in range(args.trials):
            for variant in VARIANTS:
                run, whole = write_file(path, variant, args, buf)
                runs[variant].append(run)
                files[variant].append(whole)
                print(f"trial {trial + 1}/{args.trials} {variant:8s} run {run:.3f} ns/byte, file {whole:.3f}",
                      file=sys.stderr, flush=True)
    finally:
        if os.path.exists(path):
            os.unlink(path)
    print(f"{args.run >> 20} MiB uncached run of {args.bs >> 10} KiB writes at {args.at >> 20} MiB of a "
          f"{args.size >> 20} MiB file, median [min-max] of {args.trials} interleaved trials, ns/byte:")
    for v in VARIANTS:
        print(f"  {v:8s}  run {statistics.median(runs[v]):.3f} [{min(runs[v]):.3f}-{max(runs[v]):.3f}]"
              f"  file {statistics.median(files[v]):.3f} [{min(files[v]):.3f}-{max(files[v]):.3f}]")


if __name__ == "__main__":
    main()
