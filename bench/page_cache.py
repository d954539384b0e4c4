"""Page-cache helpers shared by the Python benchmarks (bench/compare/compare.py,
bench/torch/checkpoint_once.py); torch-free, standard library only, so that
compare.py can import it without torch.
"""
import os


def drop_caches(path=None):
    """Drops cached pages: the whole page cache when root, and `path`'s pages
    in any case (when it exists).  Returns how: "drop_caches" or "fadvise"."""
    how = "fadvise"
    os.sync()
    try:
        with open("/proc/sys/vm/drop_caches", "w") as f:
            f.write("3")
        how = "drop_caches"
    except OSError:
        pass
    if path and os.path.exists(path):
        fd = os.open(path, os.O_RDONLY)
        try:
            os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
        finally:
            os.close(fd)
    return how
