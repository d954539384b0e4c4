#!/usr/bin/env python3
"""An unmodified Python data loader, plain and under the shim with each policy.

Sample files are written once (random bytes, the same for every variant).  A variant reads
the whole dataset --epochs times, every file whole with one numpy.fromfile() call, in a new
shuffled order each epoch (the same orders for every variant):

  --workers 0      in one process, epoch after epoch (a script's loop over np.fromfile);
  --workers N      in N worker processes forked for each epoch (multiprocessing.Pool, as
                   torch.utils.data.DataLoader's workers without persistent_workers);
  --epoch-processes  every epoch in a new process: replicas, restarted jobs and evaluation
                   jobs that read the same files one after another.

Variants are interleaved and rotated round by round; before each, the page cache is dropped
and page-cache memory brought to the same state (bench/page_cache.py's warm-up, as large as the
dataset; --no-warm-up skips it),
and the re-use history and the learned path costs start empty (a fresh HYBRIDIO_REUSE_DIR and
HYBRIDIO_STATE_DIR), as on a fresh machine.  Every read is checked at
16 sampled places against the bytes written.  --memory-limit runs the readers in a memory
cgroup (v1, root).  Prints GB/s per epoch, median [min-max] over the rounds, hybrid against
plain and against the best fixed policy; --json writes every run.

Usage: python_loader.py --shim BUILD/lib/libhybridio_preload.so [--dir DIR] [--files 16]
           [--file-size 128M] [--epochs 3] [--workers 0] [--epoch-processes] [--rounds 3]
           [--policies hybrid,buffered,direct,dontcache] [--memory-limit SIZE] [--no-warm-up]
           [--json FILE]
"""
import argparse
import json
import multiprocessing
import os
import random
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, ".."))
sys.path.insert(0, os.path.join(HERE, "..", "compare"))
from page_cache import drop_caches, warm_page_cache_memory  # noqa: E402  (bench/page_cache.py)
from compare import parse_size  # noqa: E402  (bench/compare/compare.py: 512K, 128M, 4G, 4GiB)

POLICIES = ("hybrid", "buffered", "direct", "dontcache")
CGROUP = "/sys/fs/cgroup/memory"
SAMPLES = 16
SAMPLE_BYTES = 64


def size_arg(text):
    """An argparse type: a positive size (parse_size's forms)."""
    try:
        value = parse_size(text)
    except (ValueError, IndexError):
        raise argparse.ArgumentTypeError(f"not a size: '{text}' (e.g. 512K, 128M, 4G)")
    if value <= 0:
        raise argparse.ArgumentTypeError(f"not a positive size: '{text}'")
    return value


def sample_offsets(size):
    step = max(1, (size - SAMPLE_BYTES) // (SAMPLES - 1))
    return [min(i * step, size - SAMPLE_BYTES) for i in range(SAMPLES)]


def write_dataset(directory, files, size):
    """The sample files and, per file, the bytes at its sampled offsets."""
    os.makedirs(directory, exist_ok=True)
    paths, expected = [], {}
    chunk = 8 << 20
    for i in range(files):
        path = os.path.join(directory, f"sample-{i:05d}.bin")
        with open(path, "wb") as f:
            left = size
            while left:
                n = min(chunk, left)
                f.write(os.urandom(n))
                left -= n
            f.flush()
            os.fsync(f.fileno())
        with open(path, "rb") as f:
            expected[path] = [f.read(SAMPLE_BYTES) if f.seek(o) == o else b"" for o in sample_offsets(size)]
        paths.append(path)
    return paths, expected


def read_one(job):
    """Reads one file whole with numpy.fromfile; returns (bytes, bad sample or None)."""
    import numpy
    path, samples = job
    data = numpy.fromfile(path, dtype=numpy.uint8)
    for o, want in zip(sample_offsets(data.size), samples):
        if data[o:o + SAMPLE_BYTES].tobytes() != want:
            return data.size, f"{path}: bytes at {o} differ"
    return data.size, None


def epoch_order(paths, seed, epoch):
    order = list(paths)
    random.Random(seed * 1000003 + epoch).shuffle(order)
    return order


def run_epochs(paths, expected, epochs, first_epoch, workers, seed):
    """Reads the dataset `epochs` times; returns [{epoch, bytes, seconds, gbps}]."""
    out = []
    for e in range(first_epoch, first_epoch + epochs):
        jobs = [(p, expected[p]) for p in epoch_order(paths, seed, e)]
        t0 = time.perf_counter()
        if workers:
            with multiprocessing.get_context("fork").Pool(workers) as pool:
                results = pool.map(read_one, jobs, chunksize=1)
        else:
            results = [read_one(j) for j in jobs]
        seconds = time.perf_counter() - t0
        nbytes = sum(n for n, _ in results)
        bad = [why for _, why in results if why]
        if bad:
            raise SystemExit(f"python_loader: wrong bytes read: {bad[0]}")
        out.append({"epoch": e + 1, "bytes": nbytes, "seconds": seconds, "gbps": nbytes / seconds / 1e9})
    return out


def child(args):
    """One variant's reads (in the environment the parent chose); prints one JSON line."""
    with open(args.child) as f:
        spec = json.load(f)
    expected = {p: [bytes.fromhex(h) for h in s] for p, s in spec["expected"].items()}
    epochs = run_epochs(spec["paths"], expected, spec["epochs"], spec["first_epoch"], spec["workers"], spec["seed"])
    print(json.dumps(epochs))
    return 0


class MemoryCgroup:
    """A v1 memory cgroup of `limit` bytes that the readers join."""

    def __init__(self, limit):
        if not os.path.isdir(CGROUP):
            raise SystemExit(f"python_loader: --memory-limit needs the v1 memory cgroup at {CGROUP}")
        self.path = os.path.join(CGROUP, f"hybridio-loader-{os.getpid()}")
        os.makedirs(self.path, exist_ok=True)
        with open(os.path.join(self.path, "memory.limit_in_bytes"), "w") as f:
            f.write(str(limit))

    def preexec(self):
        path = os.path.join(self.path, "tasks")

        def join():
            with open(path, "w") as f:
                f.write(str(os.getpid()))
        return join

    def close(self):
        with open(os.path.join(self.path, "memory.force_empty"), "w") as f:
            f.write("0")
        os.rmdir(self.path)


def run_variant(args, variant, spec_path, cgroup, reuse_dir):
    env = dict(os.environ)
    for k in list(env):
        if k.startswith("HYBRIDIO_"):
            del env[k]
    if variant != "plain":
        env.update(LD_PRELOAD=args.shim, HYBRIDIO_POLICY=variant, HYBRIDIO_REUSE_DIR=reuse_dir,
                   HYBRIDIO_STATE_DIR=os.path.join(reuse_dir, "learned"))
    cmd = [sys.executable, os.path.abspath(__file__), "--child", spec_path]
    out = subprocess.run(cmd, env=env, capture_output=True, text=True, check=False,
                         preexec_fn=cgroup.preexec() if cgroup else None)
    if out.returncode != 0:
        raise SystemExit(f"python_loader: the {variant} run failed:\n{out.stderr}{out.stdout}")
    return json.loads(out.stdout.strip().splitlines()[-1])


def one_round(args, variant, paths, expected, workdir, cgroup):
    """A variant's epochs, from a cold page cache and an empty re-use history."""
    drop_caches(args.dir)
    if not args.no_warm_up:
        why = warm_page_cache_memory(workdir, args.files * args.file_size)
        if why:
            raise SystemExit(f"python_loader: the page-cache memory warm-up failed: {why} (--no-warm-up skips it)")
    reuse_dir = tempfile.mkdtemp(prefix="hybridio-reuse-", dir="/dev/shm")  # tmpfs, as the default history
    per_process = args.epoch_processes
    epochs = []
    try:
        for first in (range(args.epochs) if per_process else [0]):
            spec = {"paths": paths, "expected": {p: [s.hex() for s in v] for p, v in expected.items()},
                    "epochs": 1 if per_process else args.epochs, "first_epoch": first,
                    "workers": args.workers, "seed": args.seed}
            spec_path = os.path.join(workdir, "spec.json")
            with open(spec_path, "w") as f:
                json.dump(spec, f)
            epochs += run_variant(args, variant, spec_path, cgroup, reuse_dir)
    finally:
        shutil.rmtree(reuse_dir, ignore_errors=True)
    return epochs


def summarise(args, variants, runs):
    mode = ("a process per epoch" if args.epoch_processes else
            f"{args.workers} worker processes per epoch" if args.workers else "one process")
    limit = f", memory limit {args.memory_limit / (1 << 30):.2f} GiB" if args.memory_limit else ""
    print(f"\n{args.files} files x {args.file_size / (1 << 20):.1f} MiB, {args.epochs} epochs, {mode}, "
          f"every file whole with numpy.fromfile{limit}; GB/s median [min-max] of {args.rounds} rounds, "
          "interleaved")
    med = {}
    print(f"{'variant':10s} " + " ".join(f"{'epoch ' + str(e + 1):>22s}" for e in range(args.epochs)))
    for v in variants:
        cells = []
        for e in range(args.epochs):
            g = [r[e]["gbps"] for r in runs[v]]
            med[(v, e)] = statistics.median(g)
            cells.append(f"{med[(v, e)]:7.3f} [{min(g):.2f}-{max(g):.2f}]")
        print(f"{v:10s} " + " ".join(f"{c:>22s}" for c in cells))
    summary = {}
    if "hybrid" in variants:
        fixed = [v for v in variants if v not in ("hybrid",)]
        for e in range(args.epochs):
            best = max(fixed, key=lambda v: med[(v, e)])
            ratio = med[("hybrid", e)] / med[(best, e)]
            vs_plain = med[("hybrid", e)] / med[("plain", e)]
            summary[e + 1] = {"best_fixed": best, "hybrid_vs_best": ratio, "hybrid_vs_plain": vs_plain}
            print(f"epoch {e + 1}: hybrid x{vs_plain:.2f} of plain, x{ratio:.2f} of the best fixed ({best})")
    return med, summary


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--shim")
    ap.add_argument("--dir", default=".")
    ap.add_argument("--files", type=int, default=16)
    ap.add_argument("--file-size", type=size_arg, default=parse_size("128M"))
    ap.add_argument("--epochs", type=int, default=3)
    ap.add_argument("--workers", type=int, default=0)
    ap.add_argument("--epoch-processes", action="store_true")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--policies", default=",".join(POLICIES))
    ap.add_argument("--memory-limit", type=size_arg, default=0)
    ap.add_argument("--no-warm-up", action="store_true")
    ap.add_argument("--json")
    ap.add_argument("--child", help=argparse.SUPPRESS)  # internal: one variant's reads
    args = ap.parse_args()
    if args.child:
        return child(args)
    if not args.shim or not os.path.exists(args.shim):
        ap.error(f"--shim: no preloadable library at {args.shim}")
    if args.files < 1 or args.epochs < 1 or args.rounds < 1 or args.workers < 0:
        ap.error("--files, --epochs and --rounds must be positive, --workers at least 0")
    if args.epoch_processes and args.workers:
        ap.error("--epoch-processes reads in the epoch's own process: leave --workers at 0")
    policies = [p for p in args.policies.split(",") if p]
    for p in policies:
        if p not in POLICIES:
            ap.error(f"--policies: unknown policy '{p}' ({', '.join(POLICIES)})")
    variants = ["plain"] + policies
    workdir = tempfile.mkdtemp(prefix="python-loader-", dir=args.dir)
    cgroup = MemoryCgroup(args.memory_limit) if args.memory_limit else None
    runs = {v: [] for v in variants}
    try:
        t0 = time.time()
        paths, expected = write_dataset(os.path.join(workdir, "data"), args.files, args.file_size)
        print(f"# dataset written: {args.files} files, {args.files * args.file_size / 1e9:.2f} GB "
              f"in {time.time() - t0:.0f} s", flush=True)
        for r in range(args.rounds):
            for k in range(len(variants)):
                v = variants[(k + r) % len(variants)]  # rotated: no variant always runs first
                epochs = one_round(args, v, paths, expected, workdir, cgroup)
                runs[v].append(epochs)
                print(f"round {r + 1}/{args.rounds} {v:9s} " + " ".join(f"{x['gbps']:.2f}" for x in epochs)
                      + " GB/s per epoch", flush=True)
    finally:
        shutil.rmtree(workdir, ignore_errors=True)
        if cgroup:
            cgroup.close()
    med, summary = summarise(args, variants, runs)
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"schema": "hybridio-python-loader/1", "files": args.files, "file_size": args.file_size,
                       "epochs": args.epochs, "workers": args.workers, "epoch_processes": args.epoch_processes,
                       "memory_limit": args.memory_limit, "rounds": args.rounds, "runs": runs,
                       "median_gbps": {f"{v} epoch {e + 1}": g for (v, e), g in med.items()},
                       "hybrid": summary}, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
