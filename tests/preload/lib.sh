# lib.sh - shared helpers for the real-program tests of the LD_PRELOAD shim.
# Sourced by the test scripts; they run with `set -u`.
#
# Each check prints "ok - <what>" or "not ok - <what>"; finish() prints
# "N passed, M failed" and sets the exit status.

BUILD=${BUILD:?BUILD must point at the build directory}
SHIM="$BUILD/lib/libhybridio_preload.so"
PY=/usr/bin/python3   # Debian's python3, which has numpy and torch
WORK=$(mktemp -d "$BUILD/preload-test.XXXXXX")   # on the build tree's filesystem, not tmpfs
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
VARIANTS="hybrid direct-low"
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

# direct_bytes OP: direct bytes (OP = read|write) in the stats since the last reset_stats.
direct_bytes() {
  "$PY" - "$WORK/stats" "$1" <<'PYEOF'
import glob, json, sys
total = 0
for path in glob.glob(sys.argv[1] + "/stats.*.json"):
    with open(path) as f:
        total += json.load(f)[sys.argv[2]]["direct"]["bytes"]
print(total)
PYEOF
}
reset_stats() { rm -rf "$WORK/stats"; }
has_direct() { [ "$(direct_bytes "$1")" -gt 0 ]; }

finish() {
  echo "$passed passed, $failed failed"
  [ "$failed" -eq 0 ]
}
