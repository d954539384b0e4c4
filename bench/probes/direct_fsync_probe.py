#!/usr/bin/env python3
"""How long the fsync after a stream of direct writes takes, against uncached writes.

Writes SIZE of a new file in 4 MiB O_DIRECT calls from one aligned buffer, times the calls and
the fsync after them, and does the same with RWF_DONTCACHE writes (the uncached path), rounds
interleaved.  Usage: direct_fsync_probe.py DIR [SIZE_MIB] [ROUNDS]
"""
import mmap
import os
import sys
import time

d = sys.argv[1]
size = int(sys.argv[2]) if len(sys.argv) > 2 else 1152
rounds = int(sys.argv[3]) if len(sys.argv) > 3 else 3
bs = 4 << 20
buf = mmap.mmap(-1, bs)
buf.write(os.urandom(bs))
RWF_DONTCACHE = 0x80
for r in range(rounds):
    for kind in ("direct", "dontcache"):
        path = os.path.join(d, "probe.%d" % os.getpid())
        flags = os.O_WRONLY | os.O_CREAT | os.O_TRUNC | (os.O_DIRECT if kind == "direct" else 0)
        fd = os.open(path, flags, 0o644)
        t0 = time.monotonic()
        for i in range(size * (1 << 20) // bs):
            if kind == "direct":
                os.pwrite(fd, buf, i * bs)
            else:
                os.pwritev(fd, [buf], i * bs, RWF_DONTCACHE)
        t1 = time.monotonic()
        os.fsync(fd)
        t2 = time.monotonic()
        os.close(fd)
        os.unlink(path)
        print("round %d %-9s calls %.3f s (%.2f GB/s), fsync %.3f s, in all %.2f GB/s"
              % (r + 1, kind, t1 - t0, size * 2**20 / (t1 - t0) / 1e9, t2 - t1, size * 2**20 / (t2 - t0) / 1e9),
              flush=True)
