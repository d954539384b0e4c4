#!/usr/bin/env bash
# bench/shim/ab_fio.sh - two builds of the LD_PRELOAD shim side by side under
# fio psync (the way an unmodified program meets the shim), against fio's own
# direct=1 ioengine=io_uring iodepth=8 ceiling, variants interleaved per round.
#
#   bench/shim/ab_fio.sh A_SHIM B_SHIM DIR [ROUNDS] [SIZE] [BS]
#
# Writes: a new file every time (fsync inside the timing).  Reads: one file,
# caches dropped before every read (root), on the shim's defaults; settings
# the caller exports apply to both shims (runs up to 2026-11-27 set
# HYBRIDIO_READ_THRESHOLD=BS here: their reads were not on defaults).
# Prints one line per run ("phase variant GB/s"), then the medians and the
# per-round B/A ratios.  SIZE should exceed the
# dirty limit (20 % of RAM) for writes that show writeback.  PHASES=read
# (or write) runs one phase only; reads then use one file written plainly.
set -euo pipefail
A=${1:?A_SHIM}; B=${2:?B_SHIM}; DIR=${3:?DIR}
ROUNDS=${4:-7}; SIZE=${5:-4G}; BS=${6:-4M}
PHASES=${PHASES:-write read}
case " $PHASES " in *" write "*|*" read "*) ;; *) echo "ab_fio.sh: PHASES must name write and/or read" >&2; exit 2 ;; esac
has_phase() { case " $PHASES " in *" $1 "*) return 0 ;; esac; return 1; }
[ "$(id -u)" -eq 0 ] || { echo "ab_fio.sh: run as root (drop_caches)" >&2; exit 2; }
# Absolute paths: the dynamic loader skips a preload it cannot open with only a warning, and the
# run would measure plain fio.
A=$(realpath -e "$A") || { echo "ab_fio.sh: no shim at $1" >&2; exit 2; }
B=$(realpath -e "$B") || { echo "ab_fio.sh: no shim at $2" >&2; exit 2; }
F="$DIR/ab_fio.dat"
gbps() { python3 -c "import json,sys; j=json.load(sys.stdin)['jobs'][0]; print(round(max(j['write']['bw_bytes'], j['read']['bw_bytes'])/1e9, 3))"; }
# job PRELOAD FIO_ARGS...: fio alone runs under the shim (PRELOAD empty: none), not the parser.
job() {
  local -a preload=()
  [ -z "$1" ] || preload=("LD_PRELOAD=$1")
  shift
  env "${preload[@]}" fio --name=ab --filename="$F" --bs="$BS" --size="$SIZE" \
    --output-format=json "$@" | gbps
}
if ! has_phase write; then
  rm -f "$F"
  fio --name=ab --filename="$F" --bs="$BS" --size="$SIZE" --rw=write --ioengine=psync --end_fsync=1 >/dev/null
fi
for round in $(seq "$ROUNDS"); do
  if has_phase write; then for v in a b ceiling; do
    rm -f "$F"; sync
    case $v in
      a) echo "write a $(job "$A" --rw=write --ioengine=psync --end_fsync=1)" ;;
      b) echo "write b $(job "$B" --rw=write --ioengine=psync --end_fsync=1)" ;;
      ceiling) echo "write ceiling $(job "" --rw=write --ioengine=io_uring --iodepth=8 --direct=1 --end_fsync=1)" ;;
    esac
  done; fi
  if has_phase read; then for v in a b ceiling; do
    sync; echo 3 > /proc/sys/vm/drop_caches
    case $v in
      a) echo "read a $(job "$A" --rw=read --ioengine=psync)" ;;
      b) echo "read b $(job "$B" --rw=read --ioengine=psync)" ;;
      ceiling) echo "read ceiling $(job "" --rw=read --ioengine=io_uring --iodepth=8 --direct=1)" ;;
    esac
  done; fi
done | tee "$DIR/ab_fio.txt"
rm -f "$F"
python3 - "$DIR/ab_fio.txt" <<'PY'
import collections, statistics, sys
runs = collections.defaultdict(list)
for line in open(sys.argv[1]):
    phase, variant, gbps = line.split()
    runs[(phase, variant)].append(float(gbps))
for phase in ("write", "read"):
    if not runs[(phase, "a")]:
        continue
    med = {v: statistics.median(runs[(phase, v)]) for v in ("a", "b", "ceiling")}
    ratios = [b / a for a, b in zip(runs[(phase, "a")], runs[(phase, "b")])]
    print(f"{phase}: median GB/s a {med['a']:.2f}, b {med['b']:.2f}, ceiling {med['ceiling']:.2f}; "
          f"b/a median {statistics.median(ratios):.2f} (rounds {min(ratios):.2f}-{max(ratios):.2f}), "
          f"b/ceiling {med['b'] / med['ceiling']:.2f}")
PY
