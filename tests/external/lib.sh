# lib.sh - shared by the drivers of suites no one here wrote (CPython's, gnulib's,
# stress-ng's), run plain and under the shim in each mode (docs/testing.md,
# "External suites").  Sourced by the drivers; they run with `set -u`.
#
# A driver defines run_one MODE, which runs its selection once with $(mode_env MODE)
# in the environment (empty for plain) in the scratch directory $WORK/MODE and writes
# $WORK/MODE.json (tests/external/compare.py's format); then it calls run_all, which
# runs plain and every mode, $EXTERNAL_JOBS at a time, and compares them.

BUILD=${BUILD:?BUILD must point at the build directory}
# EXTERNAL_SHIM: another preload library in its place (the deliberately wrong
# tests/differential/mutant_shim.cc with HIO_MUTANT, to check that the comparison catches it).
SHIM=${EXTERNAL_SHIM:-"$BUILD/lib/libhybridio_preload.so"}
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
PY=/usr/bin/python3
# The modes of the differential harness (tests/differential/README.md) that change engine paths.
MODES=${EXTERNAL_MODES:-"direct64k hybrid64k hybrid dontcache"}
# Two runs at a time: the VM has 2 cores and ctest runs two tests at a time.
EXTERNAL_JOBS=${EXTERNAL_JOBS:-2}
# On the build tree's filesystem (a real one, never /tmp, which may be tmpfs), or
# HYBRIDIO_TEST_DIR.
WORK=$(mktemp -d "${HYBRIDIO_TEST_DIR:-$BUILD}/external-test.XXXXXX")
[ -n "${EXTERNAL_KEEP:-}" ] || trap 'rm -rf "$WORK"' EXIT  # EXTERNAL_KEEP=1 keeps it

fail_now() {  # fail_now "why": the whole test fails, with the reason
  echo "not ok - $*"
  echo "0 passed, 1 failed"
  exit 1
}

[ -f "$SHIM" ] || fail_now "$SHIM is missing"
fstype=$(stat -f -c %T "$WORK")
case $fstype in
  tmpfs|ramfs) echo "# note: the scratch directory $WORK is on $fstype, not a disk filesystem" ;;
  *) echo "# scratch directory $WORK ($fstype)" ;;
esac

# require_package PKG...: a package tools/setup-debian.sh installs; missing is a failure,
# never a silent skip.
require_package() {
  local p
  for p in "$@"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" ||
      fail_now "Debian package $p is not installed (tools/setup-debian.sh installs it)"
  done
}

# mode_env MODE: the environment of a run (nothing for plain); CTest already sets
# HYBRIDIO_LEARN=off and HYBRIDIO_STATE_DIR for every test.
mode_env() {
  # Each process's counters go to $WORK/MODE-stats/, to show that the shim did its work.
  local common="LD_PRELOAD=$SHIM HYBRIDIO_LOG=error HYBRIDIO_STATS=$WORK/$1-stats/hio.%p.json"
  case $1 in
    plain) ;;
    direct64k) echo "$common HYBRIDIO_POLICY=direct HYBRIDIO_WRITE_THRESHOLD=64K HYBRIDIO_READ_THRESHOLD=64K" ;;
    hybrid64k) echo "$common HYBRIDIO_POLICY=hybrid HYBRIDIO_WRITE_THRESHOLD=64K HYBRIDIO_READ_THRESHOLD=64K" ;;
    hybrid) echo "$common HYBRIDIO_POLICY=hybrid" ;;
    dontcache) echo "$common HYBRIDIO_POLICY=dontcache" ;;
    *) echo "unknown mode $1" >&2; return 1 ;;
  esac
}

# run_all SUITE [EXCLUSIONS_FILE]: plain and every mode, then the comparison.
run_all() {
  local suite=$1 exclude=${2:-} m running=0 start t0
  start=$(date +%s)
  for m in plain $MODES; do
    mkdir -p "$WORK/$m" "$WORK/$m-stats"
    (
      t0=$(date +%s)
      run_one "$m" >"$WORK/$m.out" 2>&1
      echo "# $suite $m: run took $(( $(date +%s) - t0 )) s"
    ) &
    running=$((running + 1))
    if [ "$running" -ge "$EXTERNAL_JOBS" ]; then wait -n; running=$((running - 1)); fi
  done
  wait
  for m in plain $MODES; do
    grep -h "^# " "$WORK/$m.out" 2>/dev/null | sed "s/^# /# $suite $m: /" | head -5
    [ -s "$WORK/$m.json" ] || {
      echo "not ok - $suite: the $m run wrote no results; its last output:"
      tail -20 "$WORK/$m.out" | sed 's/^/    /'
    }
  done
  for m in $MODES; do
    "$PY" - "$WORK/$m-stats" "$suite" "$m" <<'PYEOF'
import glob, json, sys
t = {"processes": 0, "direct": 0, "dontcache": 0, "buffered": 0}
for p in glob.glob(sys.argv[1] + "/hio.*.json"):
    try:
        s = json.load(open(p))
    except ValueError:
        continue
    t["processes"] += 1
    for op in ("read", "write"):
        for path in ("direct", "dontcache", "buffered"):
            t[path] += s.get(op, {}).get(path, {}).get("bytes", 0)
print("# %s %s: %d processes under the shim; bytes through the engine: %.1f MiB direct, "
      "%.1f MiB dontcache, %.1f MiB buffered" % (sys.argv[2], sys.argv[3], t["processes"],
      t["direct"] / 2**20, t["dontcache"] / 2**20, t["buffered"] / 2**20))
PYEOF
  done
  local args=(--suite "$suite" --plain "$WORK/plain.json")
  for m in $MODES; do args+=(--mode "$m=$WORK/$m.json"); done
  [ -n "$exclude" ] && args+=(--exclude "$exclude")
  [ -n "${EXTERNAL_QUIET:-}" ] && args+=(--quiet)
  local rc=0
  if [ -s "$WORK/plain.json" ]; then
    "$PY" "$HERE/compare.py" "${args[@]}" || rc=1
  else
    echo "0 passed, 1 failed"; rc=1
  fi
  echo "# $suite: plain and ${MODES// /, } took $(( $(date +%s) - start )) s in all"
  return $rc
}
