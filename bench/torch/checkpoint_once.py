"""One torch.save + fsync and one cold torch.load of a state dict; prints one JSON line.

Run by compare.py, once with the LD_PRELOAD shim and once without, interleaved.
Before the save, and before the load (after the caches are dropped), page-cache
memory is brought to the same state for both (bench/page_cache.py), unless
--no-warm-up.
Usage: checkpoint_once.py DIR SIZE_BYTES [--no-warm-up]
"""
import json
import os
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from page_cache import drop_caches, warm_page_cache_memory  # noqa: E402  (bench/page_cache.py, torch-free)

import torch  # noqa: E402


def state_dict(size):
    """About `size` bytes of tensors of 64 MiB to 256 MiB, like the layers of a large model,
    plus small ones: layer i's weight is all i, its bias all -i."""
    sd, left, i = {}, size, 0
    while left > 0:
        n = min(left, (64 << 20) * (1 + i % 4)) // 4
        sd[f"layer{i}.weight"] = torch.full((max(n, 1),), float(i))
        sd[f"layer{i}.bias"] = torch.full((1000 + i,), float(-i))
        left -= n * 4
        i += 1
    return sd


def main():
    directory, size = sys.argv[1], int(sys.argv[2])
    warm_up = "--no-warm-up" not in sys.argv[3:]
    sd = state_dict(size)
    path = os.path.join(directory, f"ckpt.{os.getpid()}.pt")
    warm = warm_page_cache_memory(directory, size) if warm_up else ""
    t0 = time.perf_counter()
    torch.save(sd, path)
    fd = os.open(path, os.O_RDONLY)
    os.fsync(fd)  # a checkpoint counts as written when it is durable
    os.close(fd)
    save_s = time.perf_counter() - t0
    nbytes = os.path.getsize(path)
    cold = drop_caches(path)
    if warm_up:
        warm = warm or warm_page_cache_memory(directory, nbytes)
    t0 = time.perf_counter()
    back = torch.load(path)
    load_s = time.perf_counter() - t0
    ok = back.keys() == sd.keys() and all(torch.equal(back[k], sd[k]) for k in sd)
    os.unlink(path)
    print(json.dumps({"bytes": nbytes, "save_s": save_s, "load_s": load_s, "cold": cold,
                      "warm_up": "off" if not warm_up else (f"failed: {warm}" if warm else "ok"), "identical": ok}))
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
