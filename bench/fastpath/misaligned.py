#!/usr/bin/env python3
"""bench/fastpath/misaligned.py - torch.save-shaped writes whose bodies need
bounce buffers, against the same file offsets with the caller's buffer
shifted so that they do not.

Each record is a 64-byte header then --record bytes, so records start at
offsets that are not page aligned.  'misaligned' writes every record from a
page-aligned buffer (the body after the head split is misaligned in memory:
bounced); 'shifted' moves the buffer by the offset's remainder (no bounce);
'aligned' writes records back to back without headers.  Through libhybridio
(ctypes), one thread, fsync included; the library is configured from the
environment (HYBRIDIO_POLICY=hybrid is set unless given).

  bench/fastpath/misaligned.py --lib build/lib/libhybridio.so --dir /work/scratch --repeat 3
"""
import argparse, ctypes, mmap, os, statistics, subprocess, sys, time


def one_run(lib_path, mode, path, record, count):
    lib = ctypes.CDLL(lib_path)
    lib.hio_open.argtypes = [ctypes.c_char_p, ctypes.c_int, ctypes.c_uint, ctypes.POINTER(ctypes.c_void_p)]
    lib.hio_pwrite.argtypes = [ctypes.c_void_p, ctypes.c_void_p, ctypes.c_size_t, ctypes.c_long]
    lib.hio_pwrite.restype = ctypes.c_ssize_t
    lib.hio_fsync.argtypes = [ctypes.c_void_p]
    lib.hio_close.argtypes = [ctypes.c_void_p]
    buf = mmap.mmap(-1, record + 8192)
    base = ctypes.addressof(ctypes.c_char.from_buffer(buf))
    ctypes.memset(base, 0x5A, record + 8192)
    f = ctypes.c_void_p()
    rc = lib.hio_open(path.encode(), os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644, ctypes.byref(f))
    if rc != 0:
        sys.exit(f"misaligned.py: hio_open {path}: {os.strerror(-rc)}")
    t0, off = time.monotonic(), 0
    for _ in range(count):
        if mode != "aligned":
            assert lib.hio_pwrite(f, base, 64, off) == 64
            off += 64
        addr = base + (off % 4096 if mode == "shifted" else 0)
        assert lib.hio_pwrite(f, addr, record, off) == record
        off += record
    assert lib.hio_fsync(f) == 0 and lib.hio_close(f) == 0
    return off / (time.monotonic() - t0) / 1e9


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--lib", required=True, help="path of libhybridio.so")
    p.add_argument("--dir", required=True, help="scratch directory on the filesystem to measure")
    p.add_argument("--record", type=int, default=64 << 20, help="bytes per record [64 MiB]")
    p.add_argument("--count", type=int, default=48, help="records per run [48]")
    p.add_argument("--repeat", type=int, default=3, help="interleaved runs per mode [3]")
    p.add_argument("--modes", default="misaligned,shifted,aligned")
    p.add_argument("--worker", help=argparse.SUPPRESS)
    a = p.parse_args()
    path = os.path.join(a.dir, f"misaligned.{os.getpid()}.bin")
    if a.worker:
        print(one_run(a.lib, a.worker, a.dir, a.record, a.count))
        return
    if not os.path.isdir(a.dir):
        sys.exit(f"misaligned.py: --dir {a.dir}: not a directory")
    env = dict(os.environ)
    env.setdefault("HYBRIDIO_POLICY", "hybrid")
    results = {m: [] for m in a.modes.split(",")}
    try:
        for r in range(a.repeat):
            for m in results:
                out = subprocess.run([sys.executable, __file__, "--lib", a.lib, "--dir", path, "--worker", m,
                                      "--record", str(a.record), "--count", str(a.count)],
                                     env=env, check=True, capture_output=True, text=True)
                results[m].append(float(out.stdout))
                print(f"run {r} {m:10s} {results[m][-1]:.2f} GB/s", file=sys.stderr)
    finally:
        if os.path.exists(path):
            os.unlink(path)
    for m, v in results.items():
        print(f"{m:10s} median {statistics.median(v):.2f} GB/s  runs {' '.join(f'{x:.2f}' for x in v)}")


if __name__ == "__main__":
    main()
