"""Round trips a Python program makes, run under the shim by python_test.sh.

Each step prints one "ok - ..." line or raises.  Usage: python_roundtrips.py DIR STEP
"""
import hashlib
import mmap
import multiprocessing
import os
import sys

MiB = 1 << 20


def torch_roundtrip(d):
    import torch

    torch.manual_seed(0)
    # ~320 MiB in tensors of several shapes, plus small odd ones.
    sd = {f"layer{i}.weight": torch.randn(1024, 1024 * (i % 4 + 1)) for i in range(32)}
    sd["bias"] = torch.randn(12345)
    sd["step"] = torch.tensor(7)
    path = os.path.join(d, "model.pt")
    torch.save(sd, path)
    fd = os.open(path, os.O_RDONLY)
    os.fsync(fd)
    os.close(fd)
    back = torch.load(path)
    assert sd.keys() == back.keys(), "keys differ"
    for k in sd:
        assert torch.equal(sd[k], back[k]), f"tensor {k} differs"
    print(f"ok - torch.save/torch.load of {os.path.getsize(path) / MiB:.0f} MiB bit-identical")


def numpy_roundtrip(d):
    import numpy as np

    a = np.random.default_rng(1).standard_normal(48 * MiB // 8)
    b = np.arange(1_000_003, dtype=np.int32)  # an odd size
    np.save(os.path.join(d, "a.npy"), a)
    np.savez(os.path.join(d, "ab.npz"), a=a, b=b)
    assert np.array_equal(np.load(os.path.join(d, "a.npy")), a), "npy differs"
    z = np.load(os.path.join(d, "ab.npz"))
    assert np.array_equal(z["a"], a) and np.array_equal(z["b"], b), "npz differs"
    m = np.load(os.path.join(d, "a.npy"), mmap_mode="r")
    assert np.array_equal(m, a), "memory-mapped npy differs"
    print("ok - numpy save/savez/load/mmap load bit-identical")


def os_calls(d):
    path = os.path.join(d, "os.bin")
    data = os.urandom(9 * MiB + 13)
    fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_TRUNC, 0o644)
    assert os.pwrite(fd, data, 4097) == len(data)
    assert os.write(fd, b"tail") == 4  # at the position: 0, since pwrite does not move it
    bufs = [bytearray(3 * MiB), bytearray(6 * MiB + 13), bytearray(100)]
    n = os.preadv(fd, bufs, 4097)
    assert n == len(data), n
    assert b"".join(bufs)[: len(data)] == data, "preadv data differs"
    assert os.pread(fd, 4, 0) == b"tail"
    os.lseek(fd, 4097, os.SEEK_SET)
    assert os.read(fd, len(data)) == data, "read at position differs"
    assert os.lseek(fd, 0, os.SEEK_CUR) == 4097 + len(data), "position not advanced"
    os.fsync(fd)
    os.close(fd)
    print("ok - os.pwrite/os.write/os.preadv/os.pread/os.read exact, position kept")


def mmap_after_write(d):
    path = os.path.join(d, "mm.bin")
    data = os.urandom(8 * MiB)
    with open(path, "wb", buffering=0) as f:
        f.write(data)
    with open(path, "r+b") as f:
        m = mmap.mmap(f.fileno(), 0)
        assert m[:] == data, "mapping shows stale data"
        m[100:104] = b"MMAP"
        m.flush()
        # A large read after mapping must see the mapped store.
        f.seek(0)
        back = f.read()
        assert back[100:104] == b"MMAP" and back[104:] == data[104:], "read after mmap store differs"
        m.close()
    print("ok - mmap after write sees the data; read after a mapped store sees it")


def _child_writes(path, seed):
    data = hashlib.sha256(str(seed).encode()).digest() * (6 * MiB // 32)
    with open(path, "wb") as f:
        f.write(data)
        f.flush()
        os.fsync(f.fileno())


def fork_children(d):
    ctx = multiprocessing.get_context("fork")
    procs = [ctx.Process(target=_child_writes, args=(os.path.join(d, f"child{i}.bin"), i)) for i in range(3)]
    for p in procs:
        p.start()
    for p in procs:
        p.join()
        assert p.exitcode == 0, p.exitcode
    for i in range(3):
        want = hashlib.sha256(str(i).encode()).digest() * (6 * MiB // 32)
        with open(os.path.join(d, f"child{i}.bin"), "rb") as f:
            assert f.read() == want, f"child {i} file differs"
    print("ok - multiprocessing fork children write through the shim")


def close_every_fd(d):
    """A program that closes every descriptor (as daemons do) also closes the shim's own."""
    path = os.path.join(d, "closeall.bin")
    first, second = os.urandom(8 * MiB), os.urandom(8 * MiB)
    fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_TRUNC, 0o644)
    assert os.pwrite(fd, first, 0) == len(first)
    os.closerange(3, 65536)  # close_range(2): the file and the shim's O_DIRECT twin
    fd = os.open(path, os.O_RDWR)
    assert os.pwrite(fd, second, len(first)) == len(second)
    os.fsync(fd)
    assert os.pread(fd, 2 * len(first), 0) == first + second, "data differs after closing every fd"
    os.close(fd)
    print("ok - closing every descriptor, the shim's included, loses nothing")


def subprocess_children(d):
    """posix_spawn/vfork children and exec'd programs inherit the shim and work."""
    import subprocess

    src = os.path.join(d, "spawn.src")
    data = os.urandom(20 * MiB + 5)
    with open(src, "wb") as f:
        f.write(data)
    dst = os.path.join(d, "spawn.dst")
    subprocess.run(["dd", f"if={src}", f"of={dst}", "bs=4M", "status=none"], check=True)
    with open(dst, "rb") as f:
        assert f.read() == data, "child's copy differs"
    out = subprocess.run(["sha256sum", dst], check=True, capture_output=True, text=True).stdout.split()[0]
    assert out == hashlib.sha256(data).hexdigest(), "child's checksum differs"
    print("ok - subprocess children (posix_spawn, exec) copy and read exactly")


STEPS = {f.__name__: f for f in (torch_roundtrip, numpy_roundtrip, os_calls, mmap_after_write, fork_children,
                                 close_every_fd, subprocess_children)}

if __name__ == "__main__":
    STEPS[sys.argv[2]](sys.argv[1])
