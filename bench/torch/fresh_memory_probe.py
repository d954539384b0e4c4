#!/usr/bin/env python3
"""What reading into fresh memory costs on this machine, by path; no torch, no library.

A cold torch.load reads every record into memory the process has not touched yet.  On a VM that
backs guest memory lazily, the first touch of a page costs what the host charges for it, and
that depends on which pages were freed just before.  This
probe separates the paths, in rounds with the order rotated:

  direct     O_DIRECT reads into new page-aligned anonymous mappings (the kernel faults them in)
  dontcache  RWF_DONTCACHE reads into new mappings (page-cache pages are freed as they go)
  plain      buffered reads into new mappings (page-cache pages stay)
  fill       no I/O: new mappings filled from a warm 1 MiB buffer in user space (page faults)
  populate   no I/O: MADV_POPULATE_WRITE on each new mapping, then the same fill

Every read mode starts cold (bench/page_cache.py: the whole page cache dropped when root, the
file's pages in any case).  Prints GB/s per round and the median.

Usage: fresh_memory_probe.py --file PATH [--size 2G] [--call 128M] [--rounds 3]
       (PATH is created, from /dev/urandom, when it is missing or smaller than --size)
"""
import argparse
import mmap
import os
import statistics
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, ".."))
sys.path.insert(0, HERE)
from compare import parse_size  # noqa: E402  (bench/torch/compare.py, torch-free)
from page_cache import drop_caches  # noqa: E402  (bench/page_cache.py)

RWF_DONTCACHE = 0x80          # linux/fs.h; Python 3.11 has no constant for it
MADV_POPULATE_WRITE = 23      # linux/mman.h, Linux 5.14+
FILL_CHUNK = 1 << 20


def ensure_file(path, size):
    if os.path.exists(path) and os.path.getsize(path) >= size:
        return
    with open("/dev/urandom", "rb") as src, open(path, "wb") as dst:
        left = size
        while left:
            n = min(left, 64 << 20)
            dst.write(src.read(n))
            left -= n
        dst.flush()
        os.fsync(dst.fileno())


def probe_file_size(path, size_mib, tool):
    """A probe's input: made of random bytes first when size_mib > 0 (ensure_file), then its size;
    exits with the tool's name and the reason when it cannot be read."""
    if size_mib > 0:
        ensure_file(path, size_mib << 20)
    try:
        return os.stat(path).st_size
    except OSError as e:
        sys.exit(f"{tool}: {path}: {e.strerror}")


def timed_reads(path, size, call, mode):
    drop_caches(path)
    fd = os.open(path, os.O_RDONLY | (os.O_DIRECT if mode == "direct" else 0))
    maps = []
    try:
        t0 = time.perf_counter()
        for off in range(0, size, call):
            m = mmap.mmap(-1, call)  # new, untouched anonymous memory
            n = os.preadv(fd, [m], off, RWF_DONTCACHE if mode == "dontcache" else 0)
            if n != call:
                sys.exit(f"fresh_memory_probe: short read ({n} of {call} bytes at {off}, {mode})")
            maps.append(m)
        return time.perf_counter() - t0
    finally:
        os.close(fd)
        for m in maps:
            m.close()


def timed_fill(size, call, populate, warm):
    maps = []
    try:
        t0 = time.perf_counter()
        for _ in range(0, size, call):
            m = mmap.mmap(-1, call)
            if populate:
                m.madvise(MADV_POPULATE_WRITE)
            view = memoryview(m)
            for o in range(0, call, FILL_CHUNK):
                view[o:o + FILL_CHUNK] = warm
            view.release()
            maps.append(m)
        return time.perf_counter() - t0
    finally:
        for m in maps:
            m.close()


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--file", required=True, help="the file to read (created when missing)")
    ap.add_argument("--size", type=parse_size, default=parse_size("2G"), help="bytes per pass [2G]")
    ap.add_argument("--call", type=parse_size, default=parse_size("128M"), help="bytes per read, a multiple of 1M [128M]")
    ap.add_argument("--rounds", type=int, default=3, help="rounds, order rotated [3]")
    args = ap.parse_args()
    if args.call < FILL_CHUNK or args.call % FILL_CHUNK or args.size % args.call or args.rounds < 1:
        sys.exit("fresh_memory_probe: --call must be a multiple of 1M that divides --size; --rounds >= 1")
    ensure_file(args.file, args.size)
    warm = mmap.mmap(-1, FILL_CHUNK)
    warm.write(b"\1" * FILL_CHUNK)
    modes = ["direct", "dontcache", "plain", "fill", "populate"]
    gbps = {m: [] for m in modes}
    for r in range(args.rounds):
        order = modes[r % len(modes):] + modes[:r % len(modes)]
        for mode in order:
            if mode in ("fill", "populate"):
                seconds = timed_fill(args.size, args.call, mode == "populate", warm)
            else:
                seconds = timed_reads(args.file, args.size, args.call, mode)
            gbps[mode].append(args.size / seconds / 1e9)
        print(f"round {r + 1}: " + ", ".join(f"{m} {gbps[m][-1]:.2f}" for m in modes), file=sys.stderr)
    print(f"{args.size >> 20} MiB in {args.call >> 20} MiB calls into new anonymous memory, GB/s, "
          f"median [min-max] of {args.rounds} rounds:")
    for m in modes:
        v = sorted(gbps[m])
        print(f"  {m:9s} {statistics.median(v):5.2f} [{v[0]:.2f}-{v[-1]:.2f}]")


if __name__ == "__main__":
    main()
