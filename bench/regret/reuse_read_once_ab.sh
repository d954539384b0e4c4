#!/usr/bin/env bash
# Reads done once, with the re-use rule on and off: what the rule's bookkeeping
# (an fstat and a look into the history per read sent off the cache) costs data
# that is never read again.  Per request size, `hybridio bench --rw=read
# --policy=hybrid` reads a cold file once per run, the two variants alternating
# round by round; every "on" run starts from an empty history of its own, so
# nothing it reads counts as read before.  Learning is off in both
# (HYBRIDIO_LEARN=off): the size rules route the reads the same way in every
# run, so the only difference is the rule.  Prints each run and, per size,
# the medians and on/off.
#
#   bench/regret/reuse_read_once_ab.sh BUILD DIR [ROUNDS] [SIZE] [SIZES]
#   bench/regret/reuse_read_once_ab.sh build /mnt/nvme/tmp 5 4G 64K,1M,4M,16M
set -euo pipefail
build=${1:?usage: $0 BUILD DIR [ROUNDS] [SIZE] [SIZES]}
dir=${2:?usage: $0 BUILD DIR [ROUNDS] [SIZE] [SIZES]}
rounds=${3:-5}
size=${4:-4G}
sizes=${5:-64K,1M,4M,16M}
hio="$build/bin/hybridio"
[ -x "$hio" ] || { echo "$0: no $hio" >&2; exit 2; }
mkdir -p "$dir"
work=$(mktemp -d "$dir/read-once-ab.XXXXXX")
trap 'rm -rf "$work"' EXIT

gbps() {  # one cold read run of hybrid; prints its GB/s
  HYBRIDIO_LEARN=off "$hio" bench --rw=read --bs="$1" --size="$size" --policy=hybrid --repeat=1 --keep-files \
      --directory="$work/files" --json=- 2>/dev/null |
    python3 -c 'import json,sys; r=json.load(sys.stdin); print("%.3f" % r["results"][0]["gbps_median"])'
}

declare -A runs
mkdir -p "$work/files"
for bs in ${sizes//,/ }; do
  for ((r = 1; r <= rounds; r++)); do
    order="off on"; [ $((r % 2)) = 0 ] && order="on off"  # rotated
    for v in $order; do
      if [ "$v" = on ]; then
        hist=$(mktemp -d /dev/shm/hybridio-reuse.XXXXXX)  # tmpfs, where the default history lives
        g=$(HYBRIDIO_REUSE_BUDGET=auto HYBRIDIO_REUSE_DIR="$hist" gbps "$bs")
        rm -rf "$hist"
      else
        g=$(HYBRIDIO_REUSE_BUDGET=off gbps "$bs")
      fi
      runs[$bs.$v]+="$g "
      echo "bs=$bs round=$r reuse=$v $g GB/s"
    done
  done
done
echo
echo "cold reads of $size once, hybrid, median [min-max] of $rounds rounds, rule off and on alternating"
for bs in ${sizes//,/ }; do
  python3 - "$bs" "${runs[$bs.off]}" "${runs[$bs.on]}" <<'EOF'
import statistics, sys
bs, off, on = sys.argv[1], [float(x) for x in sys.argv[2].split()], [float(x) for x in sys.argv[3].split()]
mo, mn = statistics.median(off), statistics.median(on)
print(f"{bs:>5s}  off {mo:6.3f} [{min(off):.2f}-{max(off):.2f}]  on {mn:6.3f} [{min(on):.2f}-{max(on):.2f}]  on/off x{mn / mo:.3f}")
EOF
done
