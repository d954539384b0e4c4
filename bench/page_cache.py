"""Page-cache helpers shared by the Python benchmarks (bench/compare/compare.py,
bench/torch/checkpoint_once.py, bench/regret/read_switch_probe.py); torch-free,
standard library only, so that compare.py can import it without torch.

drop_caches(path): cold caches before a timed read.
warm_page_cache_memory(directory, nbytes): the same page-cache memory state
for every variant before a timed phase.
"""
import os


def drop_caches(path=None):
    """Drops cached pages: the whole page cache when root (unless
    HYBRIDIO_BENCH_COLD=files), and `path`'s pages in any case (when it
    exists).  Returns how: "drop_caches" or "fadvise"."""
    how = "fadvise"
    os.sync()
    # HYBRIDIO_BENCH_COLD=files: only `path`, for runs beside other work.
    if os.environ.get("HYBRIDIO_BENCH_COLD") != "files":
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


def warm_page_cache_memory(directory, nbytes, chunk=64 << 20):
    """Brings page-cache memory to the same state before a timed phase,
    whatever ran before it (untimed): a sparse file of `nbytes` in
    `directory` is read through the page cache, then its pages are dropped
    and it is deleted; no device I/O, and no disk space where the filesystem
    has holes.  The Python twin of warm_page_cache_memory() in
    bench/io_runner.h, where docs/bench.md says why: on a VM that hands
    freed memory back to the host, a page not used recently costs a host
    fault on first touch.  The file is read with sendfile(2) to /dev/null,
    which a preloaded shim does not intercept (it would route large reads
    elsewhere).  Returns "" or why it could not."""
    path = os.path.join(directory, f".hybridio-warm-up.{os.getpid()}")
    try:
        fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_TRUNC | os.O_CLOEXEC, 0o600)
    except OSError as e:
        return f"cannot create {path}: {e.strerror}"
    os.unlink(path)  # the pages stay until the descriptor is closed
    try:
        os.ftruncate(fd, nbytes)
        null = os.open(os.devnull, os.O_WRONLY | os.O_CLOEXEC)
        try:
            at = 0
            while at < nbytes:
                n = os.sendfile(null, fd, at, min(chunk, nbytes - at))
                if n <= 0:
                    return "short read"
                at += n
        finally:
            os.close(null)
        os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
        return ""
    except OSError as e:
        return e.strerror or str(e)
    finally:
        os.close(fd)
