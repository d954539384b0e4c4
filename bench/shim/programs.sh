#!/usr/bin/env bash
# bench/shim/programs.sh - what the shim does for the everyday programs of
# Debian 12, plain against the shim, variants interleaved per round.
#
#   bench/shim/programs.sh SHIM DIR [ROUNDS] [SIZE]
#   PROGRAMS=cp,cat bench/shim/programs.sh ...   (a subset)
#
# Each program copies (or writes) one SIZE file of random bytes, from a
# source on DIR's filesystem, to DIR (same filesystem) and to a fresh xfs
# loop filesystem on a file in DIR (another filesystem).  The timing runs
# from the start of the program to the end of `sync -f` on the target, so
# writeback is paid inside it; caches are dropped before every run (root).
# Prints one line per run ("program target variant seconds bytes"), where
# bytes are those the shim wrote off the page cache (direct or uncached),
# then per program and target: median seconds plain and with the shim,
# their ratio, and that share of the file.
set -euo pipefail
SHIM=${1:?SHIM}; DIR=${2:?DIR}
ROUNDS=${3:-5}; SIZE=${4:-2G}
[ "$(id -u)" -eq 0 ] || { echo "programs.sh: run as root (drop_caches, mount)" >&2; exit 2; }
SHIM=$(realpath "$SHIM")
work=$(mktemp -d "$DIR/programs.XXXXXX")
mnt="$work/xfs"
cleanup() { mountpoint -q "$mnt" && umount "$mnt"; rm -rf "$work"; }
trap cleanup EXIT
bytes=$(numfmt --from=iec "$SIZE")
head -c "$bytes" /dev/urandom >"$work/src"
truncate -s $((bytes * 3)) "$work/xfs.img"
mkfs.xfs -q "$work/xfs.img"
mkdir -p "$mnt" "$work/same"
mount -o loop "$work/xfs.img" "$mnt"

# The programs, each a shell command copying $SRC to $DST.
programs=(
  "cp|cp \"\$SRC\" \"\$DST\""
  "cat|cat \"\$SRC\" > \"\$DST\""
  "dd-4M|dd if=\"\$SRC\" of=\"\$DST\" bs=4M status=none"
  "shutil|python3 -c 'import shutil,sys; shutil.copyfile(sys.argv[1], sys.argv[2])' \"\$SRC\" \"\$DST\""
  "rsync|rsync \"\$SRC\" \"\$DST\""
  "tar|tar -C \"\$(dirname \"\$SRC\")\" -cf \"\$DST\" \"\$(basename \"\$SRC\")\""
  "gzip-1|gzip -1 -c \"\$SRC\" > \"\$DST\""
)

run() {  # run PROGRAM_COMMAND TARGET_DIR VARIANT -> "seconds shim-bytes"
  local cmd=$1 target=$2 variant=$3 stats="$work/stats.json"
  rm -f "$target/dst" "$stats"
  sync; echo 3 >/proc/sys/vm/drop_caches
  local start end
  start=$(date +%s.%N)
  if [ "$variant" = shim ]; then
    SRC="$work/src" DST="$target/dst" HYBRIDIO_STATS="$stats" LD_PRELOAD="$SHIM" bash -c "$cmd"
  else
    SRC="$work/src" DST="$target/dst" bash -c "$cmd"
  fi
  sync -f "$target/dst"
  end=$(date +%s.%N)
  local moved=0
  [ -f "$stats" ] && moved=$(python3 -c "import json,sys; s=json.load(open(sys.argv[1])); print(s['write']['direct']['bytes'] + s['write']['dontcache']['bytes'])" "$stats")
  echo "$(awk -v a="$start" -v b="$end" 'BEGIN { printf "%.3f", b - a }') $moved"
}

for round in $(seq "$ROUNDS"); do
  for entry in "${programs[@]}"; do
    name=${entry%%|*} cmd=${entry#*|}
    [ -n "${PROGRAMS:-}" ] && [[ ",$PROGRAMS," != *",$name,"* ]] && continue
    for target in same xfs; do
      dir=$work/same; [ $target = xfs ] && dir=$mnt
      # Alternate which variant goes first, so neither always follows the other.
      order="plain shim"; [ $((round % 2)) = 0 ] && order="shim plain"
      for variant in $order; do echo "$name $target $variant $(run "$cmd" "$dir" $variant)"; done
    done
  done
done | tee "$work/runs.txt"
cp "$work/runs.txt" "$DIR/programs-runs.txt"

python3 - "$DIR/programs-runs.txt" "$bytes" <<'PY'
import collections, statistics, sys
bytes_ = int(sys.argv[2])
runs = collections.defaultdict(list)
moved = collections.defaultdict(list)
for line in open(sys.argv[1]):
    name, target, variant, seconds, shim_bytes = line.split()
    runs[name, target, variant].append(float(seconds))
    if variant == "shim":
        moved[name, target].append(int(shim_bytes))
print(f"\n| program | target | plain s | shim s | shim/plain time | written off the page cache |")
print("|---|---|---|---|---|---|")
for name, target in dict.fromkeys((n, t) for n, t, _ in runs):
    p = statistics.median(runs[name, target, "plain"])
    s = statistics.median(runs[name, target, "shim"])
    share = statistics.median(moved[name, target]) / bytes_
    print(f"| {name} | {target} | {p:.2f} | {s:.2f} | {s / p:.2f} | {share:.0%} |")
PY
