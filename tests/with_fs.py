#!/usr/bin/env python3
"""with_fs.py - runs a test on a fresh filesystem of a given type:

    tests/with_fs.py FS COMMAND [ARGS...]

FS is ext4 (a directory on the build tree's filesystem when that is ext4,
else a loop image), xfs or btrfs (a fresh sparse loop image, made and
mounted as run_differential.py does), tmpfs or ramfs (a fresh mount).  The
directory is passed as HYBRIDIO_TEST_DIR in the environment and replaces
"{dir}" in the arguments; everything is unmounted and removed afterwards.
Mounting needs root: without it, or without the filesystem's tools, the
test is skipped (exit status 77) with the reason on stdout.  The command's
exit status is returned.
"""

import os
import shutil
import signal
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "differential"))
from run_differential import fs_type, mkfs_tool, mount_loop_fs, quiet, unmount  # noqa: E402

SKIP = 77
LOOP_SIZE = 4 << 30  # sparse: costs only what the test writes
RAM_SIZE = "3g"      # tmpfs: a ceiling, not a reservation


def skip(why):
    print("skip: " + why)
    sys.exit(SKIP)


def make_fs(kind, where):
    """A directory on a fresh filesystem of `kind` under `where`."""
    if kind == "ext4" and fs_type(where) == "ext4":
        return where
    if os.geteuid() != 0:
        skip("mounting a %s filesystem needs root" % kind)
    if kind in ("tmpfs", "ramfs"):
        mnt = os.path.join(where, kind)
        os.makedirs(mnt)
        opts = ["-o", "size=" + RAM_SIZE] if kind == "tmpfs" else []
        r = quiet(["mount", "-t", kind] + opts + ["hio-" + kind, mnt])
        if r.returncode != 0:
            skip("mount -t %s: %s" % (kind, r.stderr.strip()))
        return mnt
    if not mkfs_tool(kind):
        skip("mkfs.%s is missing (tools/setup-debian.sh installs it)" % kind)
    try:
        return mount_loop_fs(where, kind, LOOP_SIZE, kind)
    except RuntimeError as e:
        skip(str(e))


def main():
    if len(sys.argv) < 3 or sys.argv[1] not in ("ext4", "xfs", "btrfs", "tmpfs", "ramfs"):
        sys.exit(__doc__)
    kind, cmd = sys.argv[1], sys.argv[2:]
    child = None

    def stop(*_):  # ctest ends a test that times out with SIGTERM: stop it, then unmount
        if child is None:
            sys.exit(143)
        os.kill(child.pid, signal.SIGTERM)  # the wait below returns, and the mount is released

    signal.signal(signal.SIGTERM, stop)
    where = tempfile.mkdtemp(prefix="with-%s." % kind, dir=os.environ.get("BUILD") or os.getcwd())
    mnt = None
    try:
        mnt = make_fs(kind, where)
        os.chmod(mnt, 0o1777)
        env = dict(os.environ, HYBRIDIO_TEST_DIR=mnt)
        print("# %s: %s (%s)" % (kind, mnt, fs_type(mnt)), flush=True)
        child = subprocess.Popen([a.replace("{dir}", mnt) for a in cmd], env=env)
        return child.wait()
    finally:
        if mnt and mnt != where:
            unmount(mnt)
        shutil.rmtree(where, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
