#!/usr/bin/env python3
"""bench/fastpath/run.py - the fast-path targets of issue 4, side by side.

One process per measurement (so the library's settings come from the
environment, as a user would set them), variants interleaved per repeat,
medians reported.  Phases:

  write     one thread, --bs requests, a file larger than the dirty limit,
            fsync inside the timing: buffered vs hybrid vs fio direct=1
            ioengine=io_uring iodepth=8 at the same block size
  restore   caches dropped, the file just written read back: buffered vs hybrid vs fio
  cold      one file written once (direct), then restored cold by every variant in turn,
            interleaved: the read path alone, independent of how the file was written and of
            what the writing left in memory
  cached    the file read again while fully cached: buffered vs hybrid
  rand4k    4 KiB random pwrite then pread on a cached 1 GiB file
  contend   4 threads writing one file in 512 KiB requests (disjoint stripes), fsync included:
            the contention signal (rule `contended`)
  cpu       CPU seconds per GB written (process user+sys, incl. io_uring workers)

Usage (root, for drop_caches):
  bench/fastpath/run.py --lib build/lib/libhybridio.so --dir /work/scratch \
      --size 6G --repeat 5 --json out.json [--variants buffered,hybrid,hybrid_wb,fio]

Every write phase starts from a new file, for every variant: fio would otherwise
overwrite the blocks the previous variant allocated (a cheaper job than writing
a new file).  The variant fio_overwrite keeps them, to show that difference.

A variant is NAME[:ENV=VALUE[+ENV=VALUE...]] (NAME defined below, or fio,
fio_overwrite), e.g.
hybrid_wb:HYBRIDIO_QUEUE_DEPTH=16+HYBRIDIO_CHUNK_SIZE=2M.  The worker mode
(--worker) is what each measurement process runs.
"""
import argparse, ctypes, json, mmap, os, random, resource, statistics, subprocess, sys, time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from page_cache import drop_caches  # noqa: E402  (bench/page_cache.py, shared by the Python benchmarks)

VARIANTS = {
    "buffered": {"HYBRIDIO_POLICY": "buffered"},
    "hybrid": {"HYBRIDIO_POLICY": "hybrid"},
    "hybrid_r4m": {"HYBRIDIO_POLICY": "hybrid", "HYBRIDIO_READ_THRESHOLD": "4M"},
    "hybrid_wb": {"HYBRIDIO_POLICY": "hybrid", "HYBRIDIO_WRITE_BEHIND": "on"},
    "hybrid_sync": {"HYBRIDIO_POLICY": "hybrid", "HYBRIDIO_URING": "off"},
    "direct": {"HYBRIDIO_POLICY": "direct"},
}


def parse_size(t):
    units = {"K": 1 << 10, "M": 1 << 20, "G": 1 << 30}
    t = t.strip().upper().rstrip("B").rstrip("I")
    return int(t[:-1]) * units[t[-1]] if t[-1] in units else int(t)


def cpu_now():
    r = resource.getrusage(resource.RUSAGE_SELF)
    return r.ru_utime + r.ru_stime


# ---- worker: one phase in this process, through libhybridio -----------------

def worker(a):
    lib = ctypes.CDLL(a.lib)
    lib.hio_open.argtypes = [ctypes.c_char_p, ctypes.c_int, ctypes.c_uint, ctypes.POINTER(ctypes.c_void_p)]
    lib.hio_pwrite.argtypes = [ctypes.c_void_p, ctypes.c_void_p, ctypes.c_size_t, ctypes.c_long]
    lib.hio_pwrite.restype = ctypes.c_ssize_t
    lib.hio_pread.argtypes = lib.hio_pwrite.argtypes
    lib.hio_pread.restype = ctypes.c_ssize_t
    lib.hio_fsync.argtypes = [ctypes.c_void_p]
    lib.hio_close.argtypes = [ctypes.c_void_p]
    size, bs = a.size, a.bs
    # Buffers are reused across phases: first touch of fresh memory is slow on this VM.
    buf = mmap.mmap(-1, max(bs, 4096))
    addr = ctypes.addressof(ctypes.c_char.from_buffer(buf))
    ctypes.memset(addr, 0x5a, len(buf))
    f = ctypes.c_void_p()
    out = {}
    if a.phase == "write":
        rc = lib.hio_open(a.file.encode(), os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644, ctypes.byref(f))
        assert rc == 0, rc
        t0, c0 = time.monotonic(), cpu_now()
        for off in range(0, size, bs):
            ctypes.memmove(addr, off.to_bytes(8, "little"), 8)
            n = lib.hio_pwrite(f, addr, bs, off)
            assert n == bs, (off, n)
        assert lib.hio_fsync(f) == 0
        assert lib.hio_close(f) == 0
        out = {"seconds": time.monotonic() - t0, "cpu": cpu_now() - c0, "bytes": size}
    elif a.phase in ("restore", "cached"):
        rc = lib.hio_open(a.file.encode(), os.O_RDONLY, 0, ctypes.byref(f))
        assert rc == 0, rc
        t0, c0 = time.monotonic(), cpu_now()
        total = 0
        for off in range(0, size, bs):
            n = lib.hio_pread(f, addr, bs, off)
            assert n == bs, (off, n)
            assert int.from_bytes(ctypes.string_at(addr, 8), "little") == off, off
            total += n
        lib.hio_close(f)
        out = {"seconds": time.monotonic() - t0, "cpu": cpu_now() - c0, "bytes": total}
    elif a.phase == "contend":
        import threading
        rc = lib.hio_open(a.file.encode(), os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644, ctypes.byref(f))
        assert rc == 0, rc
        req, nthreads = 512 << 10, 4
        bufs = [mmap.mmap(-1, req) for _ in range(nthreads)]
        for b in bufs:
            b.write(b"\x5a" * req)
        def run(t):
            baddr = ctypes.addressof(ctypes.c_char.from_buffer(bufs[t]))
            for off in range(t * req, size, nthreads * req):  # ctypes drops the GIL during the call
                assert lib.hio_pwrite(f, baddr, req, off) == req
        t0, c0 = time.monotonic(), cpu_now()
        threads = [threading.Thread(target=run, args=(t,)) for t in range(nthreads)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        assert lib.hio_fsync(f) == 0
        assert lib.hio_close(f) == 0
        out = {"seconds": time.monotonic() - t0, "cpu": cpu_now() - c0, "bytes": size}
    elif a.phase == "rand4k":
        rc = lib.hio_open(a.file.encode(), os.O_RDWR, 0, ctypes.byref(f))
        assert rc == 0, rc
        rng = random.Random(42)
        blocks = size // 4096
        offs = [rng.randrange(blocks) * 4096 for _ in range(a.count)]
        t0, c0 = time.monotonic(), cpu_now()
        for off in offs:
            assert lib.hio_pwrite(f, addr, 4096, off) == 4096
        tw, cw = time.monotonic() - t0, cpu_now() - c0
        t0 = time.monotonic()
        for off in offs:
            assert lib.hio_pread(f, addr, 4096, off) == 4096
        tr = time.monotonic() - t0
        lib.hio_close(f)
        out = {"write_iops": a.count / tw, "read_iops": a.count / tr, "write_cpu": cw}
    json.dump(out, sys.stdout)


# ---- driver -------------------------------------------------------------------

def variant_env(variant):
    """NAME[:ENV=VALUE[+ENV=VALUE...]]: a variant of VARIANTS with extra environment."""
    name, _, extra = variant.partition(":")
    if name not in VARIANTS:
        sys.exit(f"run.py: unknown variant '{name}' (known: {', '.join(sorted(VARIANTS))}, fio, fio_overwrite)")
    env = dict(VARIANTS[name])
    for item in filter(None, extra.split("+")):
        key, eq, value = item.partition("=")
        if not eq or not key.startswith("HYBRIDIO_"):
            sys.exit(f"run.py: variant '{variant}': '{item}' is not HYBRIDIO_NAME=VALUE")
        env[key] = value
    return env


def run_worker(a, variant, phase, path, size, extra_env=None, count=0):
    env = dict(os.environ)
    for k in list(env):
        if k.startswith("HYBRIDIO_"):
            del env[k]
    env.update(variant_env(variant))
    env.update(extra_env or {})
    cmd = [sys.executable, __file__, "--worker", "--lib", a.lib, "--phase", phase, "--file", path,
           "--size", str(size), "--bs", str(a.bs), "--count", str(count)]
    res = subprocess.run(cmd, env=env, check=True, capture_output=True, text=True)
    return json.loads(res.stdout)


def run_fio(a, rw, path, size):
    cmd = ["fio", "--name=ceiling", f"--filename={path}", f"--size={size}", f"--bs={a.bs}", f"--rw={rw}",
           "--direct=1", "--ioengine=io_uring", "--iodepth=8", "--output-format=json"]
    if rw == "write":
        cmd.append("--end_fsync=1")
    t0 = time.monotonic()
    res = subprocess.run(cmd, check=True, capture_output=True, text=True)
    wall = time.monotonic() - t0
    j = json.loads(res.stdout)["jobs"][0]
    side = j["write" if rw == "write" else "read"]
    # fio's bw excludes the end fsync; time the whole command for writes instead.
    secs = wall if rw == "write" else side["runtime"] / 1000.0
    cpu = (j["usr_cpu"] + j["sys_cpu"]) / 100.0 * j["job_runtime"] / 1000.0
    return {"seconds": secs, "cpu": cpu, "bytes": size, "fio_bw": side["bw_bytes"]}


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--worker", action="store_true")
    p.add_argument("--lib", required=True)
    p.add_argument("--phase")
    p.add_argument("--file")
    p.add_argument("--dir", default=".")
    p.add_argument("--size", default="6G")
    p.add_argument("--bs", default="4M")
    p.add_argument("--count", type=int, default=0)
    p.add_argument("--repeat", type=int, default=5)
    p.add_argument("--variants", default="buffered,hybrid,fio")
    p.add_argument("--phases", default="write,restore,cached,rand4k")
    p.add_argument("--json")
    a = p.parse_args()
    a.size, a.bs = parse_size(str(a.size)), parse_size(str(a.bs))
    if a.worker:
        return worker(a)
    a.lib = os.path.abspath(a.lib)
    variants = a.variants.split(",")
    phases = a.phases.split(",")
    results = {}  # (phase, variant) -> [runs]
    big = os.path.join(a.dir, "fastpath-big.dat")
    small = os.path.join(a.dir, "fastpath-rand.dat")
    for rep in range(a.repeat):
        order = variants[rep % len(variants):] + variants[:rep % len(variants)]  # rotate per repeat
        for v in order:
            if "write" in phases or "restore" in phases or "cached" in phases:
                # Every variant writes a new file, as a checkpoint does: fio would otherwise overwrite
                # the blocks the previous variant allocated, a cheaper job than ours (O_TRUNC).
                # fio_overwrite keeps them, to show that difference.
                if v != "fio_overwrite" and os.path.exists(big):
                    os.unlink(big)
                r = run_fio(a, "write", big, a.size) if v.startswith("fio") else run_worker(a, v, "write", big, a.size)
                results.setdefault(("write", v), []).append(r)
                print(f"rep {rep} {v:12s} write   {a.size / r['seconds'] / 1e9:6.2f} GB/s  cpu {r['cpu'] / (a.size / 1e9):.3f} s/GB", flush=True)
                if "restore" in phases:
                    drop_caches(big)
                    r = run_fio(a, "read", big, a.size) if v.startswith("fio") else run_worker(a, v, "restore", big, a.size)
                    results.setdefault(("restore", v), []).append(r)
                    print(f"rep {rep} {v:12s} restore {a.size / r['seconds'] / 1e9:6.2f} GB/s", flush=True)
                if "cached" in phases and not v.startswith("fio"):
                    csize = min(a.size, 4 << 30)
                    subprocess.run(["cat", big], stdout=subprocess.DEVNULL, check=True)  # fully cached
                    run_worker(a, v, "cached", big, csize)  # warm-up pass
                    r = run_worker(a, v, "cached", big, csize)
                    results.setdefault(("cached", v), []).append(r)
                    print(f"rep {rep} {v:12s} cached  {csize / r['seconds'] / 1e9:6.2f} GB/s", flush=True)
            if "cold" in phases:
                shared = os.path.join(a.dir, "fastpath-cold.dat")
                if not os.path.exists(shared):
                    run_worker(a, "direct", "write", shared, a.size)  # stamped, for verification
                drop_caches(shared)
                r = run_fio(a, "read", shared, a.size) if v.startswith("fio") else run_worker(a, v, "restore", shared, a.size)
                results.setdefault(("cold", v), []).append(r)
                print(f"rep {rep} {v:12s} cold    {a.size / r['seconds'] / 1e9:6.2f} GB/s  cpu {r['cpu'] / (a.size / 1e9):.3f} s/GB", flush=True)
            if "contend" in phases and not v.startswith("fio"):
                r = run_worker(a, v, "contend", big, a.size)
                results.setdefault(("contend", v), []).append(r)
                print(f"rep {rep} {v:12s} contend {a.size / r['seconds'] / 1e9:6.2f} GB/s  cpu {r['cpu'] / (a.size / 1e9):.3f} s/GB", flush=True)
            if "rand4k" in phases and not v.startswith("fio"):
                if not os.path.exists(small):
                    subprocess.run(["fio", "--name=prep", f"--filename={small}", "--size=1G", "--bs=1M", "--rw=write",
                                    "--output-format=terse"], check=True, capture_output=True)
                subprocess.run(["cat", small], stdout=subprocess.DEVNULL, check=True)
                r = run_worker(a, v, "rand4k", small, 1 << 30, count=50000)
                results.setdefault(("rand4k", v), []).append(r)
                print(f"rep {rep} {v:12s} rand4k  write {r['write_iops']:.0f} IOPS, read {r['read_iops']:.0f} IOPS", flush=True)
    # Medians.
    table = {}
    for (phase, v), runs in results.items():
        if phase == "rand4k":
            table[f"{phase}.{v}"] = {"write_iops": statistics.median(r["write_iops"] for r in runs),
                                     "read_iops": statistics.median(r["read_iops"] for r in runs), "n": len(runs)}
        else:
            table[f"{phase}.{v}"] = {"gbps": statistics.median(r["bytes"] / r["seconds"] / 1e9 for r in runs),
                                     "cpu_s_per_gb": statistics.median(r["cpu"] / (r["bytes"] / 1e9) for r in runs),
                                     "n": len(runs), "runs_gbps": [round(r["bytes"] / r["seconds"] / 1e9, 3) for r in runs]}
    print(json.dumps(table, indent=1))
    if a.json:
        with open(a.json, "w") as f:
            json.dump({"size": a.size, "bs": a.bs, "repeat": a.repeat, "kernel": os.uname().release,
                       "results": table}, f, indent=1)
    for f in (big, os.path.join(a.dir, "fastpath-cold.dat")):
        if os.path.exists(f):
            os.unlink(f)


if __name__ == "__main__":
    main()
