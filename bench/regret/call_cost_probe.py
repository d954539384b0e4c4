#!/usr/bin/env python3
"""call_cost_probe - what each call of a sequential read stream costs through
the library, by policy.

The learner folds a path's calls into samples; how many calls a sample needs
depends on how the calls' costs are spread, and a stream may have a period
(a call that waits for the kernel's next readahead window).  This reads FILE from its start in CALL-MiB
calls through libhybridio (ctypes: hio_open, hio_pread), one process per
policy (HYBRIDIO_POLICY), the page cache dropped before each, the policies
interleaved over the trials, and prints per policy:
  - GB/s of the whole stream, the first call's ms, the mean of the others;
  - calls 2-13 in ms (the pattern);
  - the spread (standard deviation over the mean) of one call, and of the
    means of 2, 4, ... calls, within each trial: where it falls is the
    stream's period.
The library is configured from the environment otherwise; each run gets an
empty HYBRIDIO_STATE_DIR.  Root (it drops the page cache).

  bench/regret/call_cost_probe.py --lib build/lib/libhybridio.so FILE --size-mib 7168 --call-mib 64
"""
import argparse
import ctypes
import json
import mmap
import os
import statistics
import subprocess
import sys
import tempfile
import time

BENCH = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")
sys.path.insert(0, BENCH)
sys.path.insert(0, os.path.join(BENCH, "torch"))
from page_cache import drop_caches  # noqa: E402  (bench/page_cache.py)
from fresh_memory_probe import probe_file_size  # noqa: E402  (bench/torch, torch-free)

POLICIES = ("buffered", "direct", "dontcache", "hybrid")


def read_stream(lib_path, path, call):
    """Worker: the ns of every call of one sequential read of `path`."""
    lib = ctypes.CDLL(lib_path)
    lib.hio_open.argtypes = [ctypes.c_char_p, ctypes.c_int, ctypes.c_uint, ctypes.POINTER(ctypes.c_void_p)]
    lib.hio_pread.argtypes = [ctypes.c_void_p, ctypes.c_void_p, ctypes.c_size_t, ctypes.c_long]
    lib.hio_pread.restype = ctypes.c_ssize_t
    lib.hio_close.argtypes = [ctypes.c_void_p]
    buf = mmap.mmap(-1, call)
    base = ctypes.addressof(ctypes.c_char.from_buffer(buf))
    ctypes.memset(base, 1, call)  # the caller's buffer is warm, as a program's reused one is
    f = ctypes.c_void_p()
    rc = lib.hio_open(path.encode(), os.O_RDONLY, 0, ctypes.byref(f))
    if rc != 0:
        sys.exit(f"call_cost_probe: hio_open {path}: {os.strerror(-rc)}")
    size = os.stat(path).st_size
    calls = []
    for off in range(0, size - call + 1, call):
        start = time.perf_counter_ns()
        n = lib.hio_pread(f, base, call, off)
        calls.append(time.perf_counter_ns() - start)
        if n != call:
            sys.exit(f"call_cost_probe: short read at {off}: {n} of {call} bytes")
    lib.hio_close(f)
    return calls


def spread(values):
    mean = statistics.mean(values)
    return statistics.pstdev(values) / mean if len(values) > 1 and mean > 0 else float("nan")


def report(policy, runs, call):
    """One line set per policy, over its trials' calls (each trial's first call apart)."""
    firsts = [r[0] / 1e6 for r in runs]
    rest = [r[1:] for r in runs]
    total_ns = statistics.median(sum(r) for r in runs)
    gbps = len(runs[0]) * call / total_ns
    steady = statistics.mean(t for r in rest for t in r) / 1e6
    print(f"{policy:9s} {gbps:.2f} GB/s (median of {len(runs)}), first call {statistics.median(firsts):.1f} ms, "
          f"later calls mean {steady:.1f} ms")
    shown = min(12, min(len(r) for r in rest))
    print(f"          calls 2-{shown + 1}, ms (median by position): "
          + " ".join(f"{statistics.median(r[i] for r in rest) / 1e6:.1f}" for i in range(shown)))
    # Within each trial (the VM's pace differs between trials), the median over the trials.
    parts, k = [], 1
    while k <= max(1, min(len(r) for r in rest) // 4):
        per_trial = [spread([statistics.mean(r[i:i + k]) for i in range(0, len(r) - k + 1, k)]) for r in rest]
        parts.append(f"{k}: {100 * statistics.median(per_trial):.0f}%")
        k *= 2
    print("          spread of the mean of N calls (N: sd/mean, median of the trials'): " + ", ".join(parts))


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("file", help="the file to read (made with --size-mib)")
    ap.add_argument("--lib", required=True, help="path of libhybridio.so")
    ap.add_argument("--size-mib", type=int, default=0,
                    help="first make FILE this many MiB of random bytes, unless it is that large already [0: as it is]")
    ap.add_argument("--call-mib", type=int, default=64, help="bytes per call, MiB [64]")
    ap.add_argument("--policy", default="direct,dontcache",
                    help=f"comma-separated, of {','.join(POLICIES)} [direct,dontcache]")
    ap.add_argument("--trials", type=int, default=3, help="streams per policy, interleaved [3]")
    ap.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    args = ap.parse_args()
    call = args.call_mib << 20
    if args.worker:
        json.dump(read_stream(args.lib, args.file, call), sys.stdout)
        return
    policies = args.policy.split(",")
    if any(p not in POLICIES for p in policies) or args.call_mib <= 0 or args.trials <= 0:
        ap.error(f"--policy takes {','.join(POLICIES)}; --call-mib and --trials must be positive")
    if not os.path.exists(args.lib):
        sys.exit(f"call_cost_probe: --lib {args.lib}: no such file")
    size = probe_file_size(args.file, args.size_mib, "call_cost_probe")
    if size < 2 * call:
        sys.exit(f"call_cost_probe: {args.file} holds {size} bytes, fewer than two calls of {call}")
    if not os.access("/proc/sys/vm/drop_caches", os.W_OK):
        print("call_cost_probe: skipped: dropping the page cache needs root", file=sys.stderr)
        sys.exit(77)
    runs = {p: [] for p in policies}
    for trial in range(args.trials):
        for p in policies:
            with tempfile.TemporaryDirectory() as state:
                env = dict(os.environ, HYBRIDIO_POLICY=p, HYBRIDIO_STATE_DIR=state)
                drop_caches()
                out = subprocess.run([sys.executable, os.path.abspath(__file__), args.file, "--lib", args.lib,
                                      "--call-mib", str(args.call_mib), "--worker"],
                                     env=env, capture_output=True, text=True)
            if out.returncode != 0:  # a sanitized library aborts a plain python, for one
                sys.exit(f"call_cost_probe: the {p} stream failed (exit {out.returncode}):\n{out.stderr.strip()}")
            runs[p].append(json.loads(out.stdout))
            print(f"trial {trial + 1} {p}: {len(runs[p][-1]) * call / sum(runs[p][-1]):.2f} GB/s", file=sys.stderr)
    print(f"{args.file}: {size} bytes in {args.call_mib} MiB calls, caches dropped before each stream")
    for p in policies:
        report(p, runs[p], call)


if __name__ == "__main__":
    main()
