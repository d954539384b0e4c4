#!/usr/bin/env python3
"""read_switch_probe - what the first uncached read of a stream costs against
the ones after it.

The learner explores reads through the cache as short runs in a direct
stream; this times, with plain system calls (no library), every call of:
  stream   an uncached (RWF_DONTCACHE) stream of CALLS calls from offset 0;
  switch   direct reads (O_DIRECT) of the CALLS calls before the file's last
           LOOK (2), then those uncached: the look hybrid takes at a file's end
           (a longer one with --look).
Caches are dropped before each (root: /proc/sys/vm/drop_caches).  Prints the
median per-call milliseconds of each position, over the trials.  Exits 77
where the kernel has no RWF_DONTCACHE (Linux 6.14+).
"""
import argparse
import mmap
import os
import statistics
import sys
import time

BENCH = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")
sys.path.insert(0, BENCH)
sys.path.insert(0, os.path.join(BENCH, "torch"))
from page_cache import drop_caches  # noqa: E402  (bench/page_cache.py)
from fresh_memory_probe import RWF_DONTCACHE, probe_file_size  # noqa: E402  (bench/torch, torch-free)


def timed_read(fd, buf, offset, flags):
    start = time.perf_counter()
    n = os.preadv(fd, [buf], offset, flags)
    if n != len(buf):
        raise OSError(f"short read at {offset}: {n} of {len(buf)} bytes")
    return (time.perf_counter() - start) * 1e3


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("file", help="a file of at least CALLS + 2 calls (made with --size-mib)")
    ap.add_argument("--size-mib", type=int, default=0,
                    help="first make FILE this many MiB of random bytes, unless it is that large already [0: use it as it is]")
    ap.add_argument("--call-mib", type=int, default=64, help="bytes per call, MiB [64]")
    ap.add_argument("--calls", type=int, default=38, help="calls of the stream, and direct calls before the switch [38]")
    ap.add_argument("--trials", type=int, default=4, help="trials of each [4]")
    ap.add_argument("--look", type=int, default=2,
                    help="uncached calls at the file's end after the direct ones (the look's length) [2]")
    args = ap.parse_args()
    if args.call_mib <= 0 or args.calls <= 0 or args.trials <= 0 or args.look < 2:
        ap.error("--call-mib, --calls and --trials must be positive, --look at least 2")
    call = args.call_mib << 20
    size = probe_file_size(args.file, args.size_mib, "read_switch_probe")
    if size < (args.calls + args.look) * call:
        sys.exit(f"read_switch_probe: {args.file} holds {size} bytes, fewer than {args.calls + args.look} "
                 f"calls of {call}")
    if not os.access("/proc/sys/vm/drop_caches", os.W_OK):
        sys.exit("read_switch_probe: needs root, to drop the page cache before each trial")
    fd = os.open(args.file, os.O_RDONLY)
    dfd = os.open(args.file, os.O_RDONLY | os.O_DIRECT)
    buf = mmap.mmap(-1, call)  # page-aligned, as O_DIRECT wants; touched once, reused
    buf.write(b"\1" * call)
    try:
        os.preadv(fd, [memoryview(buf)[:4096]], 0, RWF_DONTCACHE)
    except OSError as e:
        print(f"read_switch_probe: this kernel refuses RWF_DONTCACHE ({e.strerror}): nothing to probe", file=sys.stderr)
        sys.exit(77)
    end = (size // call) * call - call  # the last whole call
    stream, switch = [], []
    for trial in range(args.trials):
        drop_caches()
        stream.append([timed_read(fd, buf, i * call, RWF_DONTCACHE) for i in range(args.calls)])
        drop_caches()
        first_direct = end - (args.calls + args.look - 1) * call
        for i in range(args.calls):
            timed_read(dfd, buf, first_direct + i * call, 0)
        look_start = first_direct + args.calls * call
        switch.append([timed_read(fd, buf, look_start + i * call, RWF_DONTCACHE) for i in range(args.look)])
        print(f"trial {trial + 1}: stream {' '.join(f'{t:.1f}' for t in stream[-1][:4])} ... ms; "
              f"after direct {' '.join(f'{t:.1f}' for t in switch[-1])} ms", flush=True)

    def med(rows, i):
        return statistics.median(row[i] for row in rows)

    later = statistics.median(t for row in stream for t in row[2:]) if args.calls > 2 else float("nan")
    # How the stream reaches its pace (the learner skips a look's first calls for it).
    shown = min(args.calls, 12)
    print(f"uncached stream, median ms per call by position 1-{shown}: "
          + " ".join(f"{med(stream, i):.1f}" for i in range(shown))
          + (f"; median of the calls after: {statistics.median(t for row in stream for t in row[shown:]):.1f}"
             if args.calls > shown else ""))
    print(f"uncached {args.call_mib} MiB calls, median ms of {args.trials} trials: stream first {med(stream, 0):.1f}, "
          f"second {med(stream, 1) if args.calls > 1 else float('nan'):.1f}, later {later:.1f}; "
          f"after direct reads first {med(switch, 0):.1f}, second {med(switch, 1):.1f}"
          + (f", then {' '.join(f'{med(switch, i):.1f}' for i in range(2, args.look))}" if args.look > 2 else ""))


if __name__ == "__main__":
    main()
