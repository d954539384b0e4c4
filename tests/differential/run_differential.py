#!/usr/bin/env python3
"""run_differential.py - runs hio_diff cases plain and under the LD_PRELOAD
shim in every mode and compares the transcripts line by line.

For each case: two plain runs (they must agree, or the case is flaky and
that is a harness bug), then one shim run per mode.  Every run gets a fresh
scratch directory on a disk filesystem (never tmpfs) and, for cases whose
summary says "(needs --small-fs)", a fresh 64 MiB ext4 loop filesystem
(root only).  Prints "ok - CASE [MODE]" or "not ok - CASE [MODE]" with the
differing lines, and "N passed, M failed, K skipped" at the end; exit
status 0 only when nothing failed.  Standard library only.
"""

import argparse
import atexit
import concurrent.futures
import difflib
import fnmatch
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time

# Environment added to the shim run of each mode.
MODES = {
    "direct64k": {"HYBRIDIO_POLICY": "direct", "HYBRIDIO_WRITE_THRESHOLD": "64K",
                  "HYBRIDIO_READ_THRESHOLD": "64K"},
    "hybrid64k": {"HYBRIDIO_POLICY": "hybrid", "HYBRIDIO_WRITE_THRESHOLD": "64K",
                  "HYBRIDIO_READ_THRESHOLD": "64K"},
    "hybrid": {"HYBRIDIO_POLICY": "hybrid"},
    "dontcache": {"HYBRIDIO_POLICY": "dontcache"},
    # Hybrid's uncached writes of every size drop behind the call (learning
    # starts writes uncached; drop_behind.h).
    "dropbehind": {"HYBRIDIO_POLICY": "hybrid", "HYBRIDIO_DROP_BEHIND": "64K"},
    "writebehind": {"HYBRIDIO_POLICY": "direct", "HYBRIDIO_READ_THRESHOLD": "64K",
                    "HYBRIDIO_WRITE_THRESHOLD": "64K", "HYBRIDIO_WRITE_BEHIND": "on"},
}

# Cases too slow for every mode in the default suite (--all-modes runs them
# everywhere): over_2g moves 2 x 2 GiB per run, and the shim's per-call cap
# it tests is the same whichever path the call takes.
SUITE_MODES = {"over_2g": ("direct64k",)}

SMALL_FS_MARK = "(needs --small-fs)"
SMALL_FS_SIZE = 64 << 20
FILESYSTEMS = ("ext4", "xfs", "btrfs")
SCRATCH_FS_SIZE = 8 << 30  # --fs: sparse; over_2g needs 2.5 GiB of it
SKIP_STATUS = 77
MAX_SHOWN = 12  # differing lines shown per failure
HANG_FACTOR = 10  # a shim run this much slower than plain is hung

_mounts = set()
_mounts_lock = threading.Lock()


def parse_args():
    here = os.path.dirname(os.path.abspath(__file__))
    build = os.environ.get("BUILD", os.path.join(here, "..", "..", "build"))
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--shim", default=os.path.join(build, "lib", "libhybridio_preload.so"))
    p.add_argument("--exe", default=os.path.join(build, "bin", "hio_diff"))
    p.add_argument("--cases", default="*", help="comma list of names or globs")
    p.add_argument("--skip", default="", help="comma list of names or globs left out of --cases")
    p.add_argument("--modes", default=",".join(MODES), help="comma list of " + ", ".join(MODES))
    p.add_argument("--all-modes", action="store_true", help="also run the cases of SUITE_MODES in every mode")
    p.add_argument("--ops", type=int, default=300, help="operations of the random case")
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--jobs", type=int, default=2, help="runs in parallel")
    p.add_argument("--timeout", type=float, default=120,
                   help="seconds a run may take at most; a shim run may take HANG_FACTOR times its"
                        " case's slower plain run, but at least --min-timeout")
    p.add_argument("--min-timeout", type=float, default=20)
    p.add_argument("--keep", action="store_true", help="keep the scratch directories")
    p.add_argument("--fs", choices=FILESYSTEMS,
                   help="run every case on a fresh %d GiB loop filesystem of this type (root; the"
                        " full-disk cases keep their small ext4)" % (SCRATCH_FS_SIZE >> 30))
    args = p.parse_args()
    for m in args.modes.split(","):
        if m not in MODES:
            p.error("unknown mode %r (modes: %s)" % (m, ", ".join(MODES)))
    return args


def list_cases(exe):
    """[(name, item, summary)] from hio_diff --list."""
    out = subprocess.run([exe, "--list"], check=True, capture_output=True, text=True).stdout
    cases = []
    for line in out.splitlines():
        name, item, summary = line.split(None, 2)
        cases.append((name, item, summary))
    return cases


def fs_type(path):
    """Filesystem type of the mount holding path (longest mount-point prefix)."""
    path = os.path.realpath(path)
    best, kind = "", "?"
    with open("/proc/self/mounts") as f:
        for line in f:
            fields = line.split()
            mnt = fields[1].replace("\\040", " ")
            if (path == mnt or path.startswith(mnt.rstrip("/") + "/")) and len(mnt) >= len(best):
                best, kind = mnt, fields[2]
    return kind


def scratch_base(exe):
    parent = os.environ.get("HYBRIDIO_TEST_DIR") or os.path.join(os.path.dirname(os.path.dirname(exe)), "differential")
    os.makedirs(parent, exist_ok=True)
    if fs_type(parent) in ("tmpfs", "ramfs"):
        sys.exit("not ok - %s is on %s: O_DIRECT behaves differently there; set HYBRIDIO_TEST_DIR"
                 % (parent, fs_type(parent)))
    return tempfile.mkdtemp(prefix="run.", dir=parent)


def mkfs_tool(kind="ext4"):
    for d in ("/usr/sbin", "/sbin"):
        if os.access(os.path.join(d, "mkfs." + kind), os.X_OK):
            return os.path.join(d, "mkfs." + kind)
    return shutil.which("mkfs." + kind)


def quiet(cmd):
    return subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)


def mount_loop_fs(where, kind, size, name):
    """A fresh loop filesystem of `kind` and `size` bytes (sparse image) mounted at where/name."""
    image, mnt = os.path.join(where, name + ".img"), os.path.join(where, name)
    os.makedirs(mnt)
    with open(image, "wb") as f:
        f.truncate(size)
    force = "-F" if kind == "ext4" else "-f"
    for cmd in ([mkfs_tool(kind), "-q", force, image], ["mount", "-o", "loop", image, mnt]):
        r = quiet(cmd)
        if r.returncode != 0:
            raise RuntimeError("%s: %s" % (" ".join(cmd), r.stderr.strip()))
    with _mounts_lock:
        _mounts.add(mnt)
    return mnt


def mount_small_fs(where):
    """A fresh 64 MiB ext4 loop filesystem mounted at where/mnt; returns the mount point."""
    return mount_loop_fs(where, "ext4", SMALL_FS_SIZE, "mnt")


def unmount(mnt):
    if quiet(["umount", mnt]).returncode != 0:
        quiet(["umount", "-l", mnt])
    with _mounts_lock:
        _mounts.discard(mnt)


@atexit.register
def unmount_all():
    for mnt in list(_mounts):
        unmount(mnt)


class Run:
    """One execution of a case: its transcript (stdout lines plus how it ended)."""

    def __init__(self, lines, stderr, ended, seconds=0.0, timed_out=False, error=None):
        self.lines, self.stderr, self.ended = lines, stderr, ended
        self.seconds, self.timed_out, self.error = seconds, timed_out, error

    def transcript(self):
        return self.lines + ["(process)=" + self.ended]

    def skip_reason(self):
        if self.ended == "exit=%d" % SKIP_STATUS:
            for line in self.lines:
                if line.startswith("skip: "):
                    return line[len("skip: "):]
            return "exit status 77"
        return None


def run_once(args, base, case, label, env_extra, small_fs, timeout):
    where = tempfile.mkdtemp(prefix="%s.%s." % (case, label), dir=base)
    work = os.path.join(where, "dir")
    os.makedirs(work)
    mnt = None
    env = {k: v for k, v in os.environ.items() if k != "LD_PRELOAD" and not k.startswith("HYBRIDIO_")}
    env.update(env_extra)
    # Learned thresholds stay at their default (on: they must never change
    # what a program sees), learning from scratch, in this run's directory.
    env["HYBRIDIO_STATE_DIR"] = os.path.join(where, "learned")
    # Re-use admission stays at its default too (on under hybrid: it must
    # never change what a program sees), with a history of this run's own.
    env["HYBRIDIO_REUSE_DIR"] = os.path.join(where, "reuse")
    os.makedirs(env["HYBRIDIO_REUSE_DIR"])
    cmd = [args.exe, case, "--dir", work, "--seed", str(args.seed), "--ops", str(args.ops)]
    try:
        if small_fs:
            mnt = mount_small_fs(where)
            cmd += ["--small-fs", mnt]
        start = time.monotonic()
        proc = subprocess.Popen(cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                start_new_session=True, text=True, errors="replace")
        try:
            out, err = proc.communicate(timeout=timeout)
            timed_out = False
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            out, err = proc.communicate()
            timed_out = True
        try:  # children a case left behind (it was killed) must not outlive it
            os.killpg(proc.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        rc = proc.returncode
        ended = ("timeout after %.0fs" % timeout if timed_out
                 else "exit=%d" % rc if rc >= 0 else "signal=" + signal.Signals(-rc).name)
        return Run(out.splitlines(), err, ended, time.monotonic() - start, timed_out)
    except (OSError, RuntimeError) as e:
        return Run([], "", "driver error", error=str(e))
    finally:
        if mnt:
            unmount(mnt)
        if not args.keep:
            shutil.rmtree(where, ignore_errors=True)


def differences(plain, other, label="shim"):
    """The differing lines, plain's then the other run's, per differing stretch
    (a line missing on one side is shown as missing, not as a shift of all
    the lines after it); at most MAX_SHOWN lines of each side."""
    a, b = plain.transcript(), other.transcript()
    lines, shown = [], 0
    matcher = difflib.SequenceMatcher(None, a, b, autojunk=False)
    for tag, i1, i2, j1, j2 in matcher.get_opcodes():
        if tag == "equal":
            continue
        for k in range(max(i2 - i1, j2 - j1)):
            if shown == MAX_SHOWN:
                lines.append("    ... more differing lines")
                return lines
            x = a[i1 + k] if i1 + k < i2 else "(missing)"
            y = b[j1 + k] if j1 + k < j2 else "(missing)"
            lines += ["    plain: " + x, "    %-6s " % (label + ":") + y]
            shown += 1
    return lines


def stderr_tail(run, who):
    text = (run.error or run.stderr or "").strip().splitlines()
    return ["    %s stderr: %s" % (who, line) for line in text[-8:]]


class Tally:
    def __init__(self):
        self.passed = self.failed = self.skipped = 0

    def ok(self, what):
        print("ok - " + what, flush=True)
        self.passed += 1

    def not_ok(self, what, details):
        print("not ok - " + what, flush=True)
        for line in details:
            print(line, flush=True)
        self.failed += 1

    def skip(self, what, reason):
        print("skip - %s: %s" % (what, reason), flush=True)
        self.skipped += 1


def report(tally, case, modes, plain1, plain2, shim_runs):
    reason = plain1.skip_reason()
    if plain1.error or (plain1.ended != "exit=0" and not reason):
        tally.not_ok("%s [plain]" % case, ["    plain run ended %s" % plain1.ended] + stderr_tail(plain1, "plain"))
        return
    if plain1.transcript() != plain2.transcript():
        tally.not_ok("%s [plain-vs-plain]" % case,
                     ["    two plain runs differ (a flaky case is a harness bug)"]
                     + differences(plain1, plain2, "plain2"))
    elif reason:
        tally.skip("%s [plain]" % case, reason)
    else:
        tally.ok("%s [plain-vs-plain]" % case)
    for mode in modes:
        run = shim_runs[mode]
        what = "%s [%s]" % (case, mode)
        if reason and run.skip_reason() == reason:
            tally.skip(what, reason)
        elif run.timed_out:
            tally.not_ok(what, ["    shim run hung: %s (the plain run did not)" % run.ended]
                         + differences(plain1, run) + stderr_tail(run, "shim"))
        elif run.transcript() == plain1.transcript() and not run.error:
            tally.ok(what)
        else:
            tally.not_ok(what, differences(plain1, run) + stderr_tail(run, "shim"))


def main():
    args = parse_args()
    for path, what in ((args.exe, "--exe"), (args.shim, "--shim")):
        if not os.path.exists(path):
            print("not ok - %s %s does not exist" % (what, path))
            return 1
    args.exe, args.shim = os.path.abspath(args.exe), os.path.abspath(args.shim)
    patterns = args.cases.split(",")
    skipped = [p for p in args.skip.split(",") if p]
    cases = [c for c in list_cases(args.exe) if any(fnmatch.fnmatchcase(c[0], p) for p in patterns)
             and not any(fnmatch.fnmatchcase(c[0], p) for p in skipped)]
    if not cases:
        print("not ok - no case matches %r" % args.cases)
        return 1
    modes = args.modes.split(",")
    base = outer = scratch_base(args.exe)
    if args.fs:
        if os.geteuid() != 0 or mkfs_tool(args.fs) is None:
            print("not ok - --fs %s needs root and mkfs.%s (tools/setup-debian.sh installs it)" % (args.fs, args.fs))
            return 1
        base = tempfile.mkdtemp(prefix="run.", dir=mount_loop_fs(base, args.fs, SCRATCH_FS_SIZE, args.fs))
        print("# scratch on a fresh %s loop filesystem" % args.fs)
    root = os.geteuid() == 0 and mkfs_tool() is not None
    for sig in (signal.SIGTERM, signal.SIGHUP):
        signal.signal(sig, lambda *_: sys.exit(1))  # through atexit: unmount
    tally = Tally()
    runner = concurrent.futures.ThreadPoolExecutor(max_workers=max(1, args.jobs))

    def run_case(name, case_modes, small):
        """Plain twice, then the shim runs with a timeout from the plain runs' time."""
        plain = [runner.submit(run_once, args, base, name, "plain%d" % i, {}, small, args.timeout)
                 for i in (1, 2)]
        plain = [f.result() for f in plain]
        timeout = min(args.timeout, max(args.min_timeout, HANG_FACTOR * max(r.seconds for r in plain)))
        shim = {m: runner.submit(run_once, args, base, name, m,
                                 dict(MODES[m], LD_PRELOAD=args.shim, HYBRIDIO_LOG="error"), small, timeout)
                for m in case_modes}
        return plain, {m: f.result() for m, f in shim.items()}

    try:
        # A few cases in flight, so that the runner always has work queued.
        with runner, concurrent.futures.ThreadPoolExecutor(max_workers=args.jobs + 2) as coordinators:
            planned = []
            for name, _item, summary in cases:
                case_modes = [m for m in modes if args.all_modes or m in SUITE_MODES.get(name, modes)]
                planned.append((name, case_modes,
                                coordinators.submit(run_case, name, case_modes, SMALL_FS_MARK in summary and root)))
            for name, case_modes, future in planned:
                plain, shim = future.result()
                report(tally, name, case_modes, plain[0], plain[1], shim)
    finally:
        if args.keep:
            print("# scratch kept in " + base)
        else:
            shutil.rmtree(base, ignore_errors=True)
        unmount_all()
        if not args.keep:
            shutil.rmtree(outer, ignore_errors=True)  # with --fs: the image and its mount point
    print("%d passed, %d failed, %d skipped" % (tally.passed, tally.failed, tally.skipped))
    return 0 if tally.failed == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
