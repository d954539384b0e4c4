# lib.sh - shared helpers for the real-program tests of the LD_PRELOAD shim.
# Sourced by the test scripts; they run with `set -u`.
#
# Each check prints "ok - <what>" or "not ok - <what>"; finish() prints
# "N passed, M failed" and sets the exit status.

BUILD=${BUILD:?BUILD must point at the build directory}
SHIM="$BUILD/lib/libhybridio_preload.so"
PY=/usr/bin/python3   # Debian's python3, which has numpy and torch
# On the build tree's filesystem, or where HYBRIDIO_TEST_DIR says (tests/with_fs.py
# runs a test on a fresh xfs, btrfs or tmpfs that way).
WORK=$(mktemp -d "${HYBRIDIO_TEST_DIR:-$BUILD}/preload-test.XXXXXX")
trap 'rm -rf "$WORK"' EXIT
passed=0
failed=0

[ -f "$SHIM" ] || { echo "not ok - $SHIM is missing"; exit 1; }

ok() { echo "ok - $*"; passed=$((passed + 1)); }
not_ok() { echo "not ok - $*"; failed=$((failed + 1)); }
check() {  # check "description" command...
  local what=$1; shift
  if "$@" >"$WORK/last.log" 2>&1; then ok "$what"; else not_ok "$what"; sed 's/^/    /' "$WORK/last.log" | tail -20; fi
}

# The policy variants every program runs under: the defaults, and forced
# direct I/O with low thresholds so that every path of the engine is used.
# PRELOAD_VARIANTS picks fewer (the runs on other filesystems take direct-low only).
VARIANTS=${PRELOAD_VARIANTS:-"hybrid direct-low"}
variant_env() {
  case $1 in
    hybrid) echo "HYBRIDIO_POLICY=hybrid" ;;
    direct-low) echo "HYBRIDIO_POLICY=direct HYBRIDIO_WRITE_THRESHOLD=64K HYBRIDIO_READ_THRESHOLD=64K" ;;
  esac
}

# shim VARIANT COMMAND...: runs COMMAND with the shim; per-process stats go to $WORK/stats/.
shim() {
  local variant=$1; shift
  mkdir -p "$WORK/stats"
  env $(variant_env "$variant") HYBRIDIO_STATS="$WORK/stats/stats.%p.json" LD_PRELOAD="$SHIM" "$@"
}

# stat_sum NAME...: the sum, over the processes' stats files since the last
# reset_stats, of the counters NAME (dotted paths: write.direct.bytes,
# learned.samples, fallbacks.dontcache_refused; a missing one counts 0).
stat_sum() {
  "$PY" - "$WORK/stats" "$@" <<'PYEOF'
import glob, json, sys
def counter(stats, name):
    for key in name.split("."):
        stats = stats.get(key, 0) if isinstance(stats, dict) else 0
    return stats
print(sum(counter(json.load(open(p)), n) for p in glob.glob(sys.argv[1] + "/stats.*.json") for n in sys.argv[2:]))
PYEOF
}
# direct_bytes OP: direct bytes (OP = read|write) in the stats since the last reset_stats.
direct_bytes() { stat_sum "$1.direct.bytes"; }
reset_stats() { rm -rf "$WORK/stats"; }
has_direct() { [ "$(direct_bytes "$1")" -gt 0 ]; }

# fallbacks NAME...: the sum of the stats' fallbacks.NAME counters (direct_open_refused,
# direct_io_refused, dontcache_refused) since the last reset_stats.
fallbacks() { stat_sum "${@/#/fallbacks.}"; }
# refuses odirect|dontcache: true when the filesystem under $WORK refuses
# O_DIRECT opens or RWF_DONTCACHE writes (asked with plain system calls).
refuses() {
  "$PY" - "$WORK" "$1" <<'PYEOF'
import errno, os, sys
path = os.path.join(sys.argv[1], "probe.%d" % os.getpid())
fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
try:
    if sys.argv[2] == "odirect":
        try:
            os.close(os.open(path, os.O_RDONLY | os.O_DIRECT))
            refused = False
        except OSError as e:
            refused = e.errno == errno.EINVAL
    else:
        try:
            os.pwritev(fd, [bytes(4096)], 0, 0x80)  # RWF_DONTCACHE
            refused = False
        except OSError as e:
            refused = e.errno == errno.EOPNOTSUPP
finally:
    os.close(fd)
    os.unlink(path)
sys.exit(0 if refused else 1)
PYEOF
}
# took_direct OP: direct bytes in the stats, or, where the filesystem refuses
# O_DIRECT, the refusal counted (the fallback taken for real) and no direct byte.
took_direct() {
  if refuses odirect; then
    [ "$(fallbacks direct_open_refused direct_io_refused)" -gt 0 ] && [ "$(direct_bytes "$1")" -eq 0 ]
  else
    has_direct "$1"
  fi
}

# expect "what" VALUE TEST N: ok when [ VALUE TEST N ] holds (TEST: -eq, -ge, -lt, ...).
expect() {
  if [ "$2" "$3" "$4" ] 2>/dev/null; then ok "$1 ($2)"; else not_ok "$1: want $3 $4, got $2"; fi
}

finish() {
  echo "$passed passed, $failed failed"
  [ "$failed" -eq 0 ]
}
