"""One torch.save + fsync and one cold torch.load of a state dict; prints one JSON line.

Run by compare.py, once with the LD_PRELOAD shim and once without, interleaved.
Usage: checkpoint_once.py DIR SIZE_BYTES
"""
import json
import os
import sys
import time

import torch


def drop_cache(path):
    """Drops the file from the page cache: globally when root, else just the file."""
    how = "fadvise"
    os.sync()
    try:
        with open("/proc/sys/vm/drop_caches", "w") as f:
            f.write("3")
        how = "drop_caches"
    except OSError:
        pass
    fd = os.open(path, os.O_RDONLY)
    os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
    os.close(fd)
    return how


def main():
    directory, size = sys.argv[1], int(sys.argv[2])
    # Tensors of 64 MiB to 256 MiB, like the layers of a large model, plus small ones.
    sd, left, i = {}, size, 0
    while left > 0:
        n = min(left, (64 << 20) * (1 + i % 4)) // 4
        sd[f"layer{i}.weight"] = torch.full((max(n, 1),), float(i))
        sd[f"layer{i}.bias"] = torch.full((1000 + i,), float(-i))
        left -= n * 4
        i += 1
    path = os.path.join(directory, f"ckpt.{os.getpid()}.pt")
    t0 = time.perf_counter()
    torch.save(sd, path)
    fd = os.open(path, os.O_RDONLY)
    os.fsync(fd)  # a checkpoint counts as written when it is durable
    os.close(fd)
    save_s = time.perf_counter() - t0
    nbytes = os.path.getsize(path)
    cold = drop_cache(path)
    t0 = time.perf_counter()
    back = torch.load(path)
    load_s = time.perf_counter() - t0
    ok = back.keys() == sd.keys() and all(torch.equal(back[k], sd[k]) for k in sd)
    os.unlink(path)
    print(json.dumps({"bytes": nbytes, "save_s": save_s, "load_s": load_s, "cold": cold, "identical": ok}))
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
