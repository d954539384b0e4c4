"""One torch.save + fsync and one cold torch.load of a state dict; prints one JSON line.

Run by compare.py, once with the LD_PRELOAD shim and once without, interleaved.
Usage: checkpoint_once.py DIR SIZE_BYTES
"""
import json
import os
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from page_cache import drop_caches  # noqa: E402  (bench/page_cache.py, torch-free)

import torch  # noqa: E402


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
    cold = drop_caches(path)
    t0 = time.perf_counter()
    back = torch.load(path)
    load_s = time.perf_counter() - t0
    ok = back.keys() == sd.keys() and all(torch.equal(back[k], sd[k]) for k in sd)
    os.unlink(path)
    print(json.dumps({"bytes": nbytes, "save_s": save_s, "load_s": load_s, "cold": cold, "identical": ok}))
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
