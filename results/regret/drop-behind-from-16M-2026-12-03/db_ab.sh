#!/bin/bash
# A/B: hybrid's 4 MiB uncached writes by drop-behind (threshold 4M) or RWF_DONTCACHE (threshold 16M),
# the dontcache policy beside each, rotated; a copy of a settled learned state per invocation.
set -e
BIN=/work/main/build/bin/hybridio
D=/work/scratch/ab/d; mkdir -p $D
OUT=/work/scratch/ab/db; mkdir -p $OUT
SEED_STATE=$1; ROUNDS=${2:-5}; SIZES=${3:-"7G 1152M"}; BS=${4:-4M}
for r in $(seq 1 $ROUNDS); do
  for size in $SIZES; do
    order="4M 16M"; [ $((r % 2)) = 0 ] && order="16M 4M"
    for thr in $order; do
      st=$OUT/state-$r-$size-$thr; rm -rf $st; cp -r $SEED_STATE $st
      HYBRIDIO_STATE_DIR=$st HYBRIDIO_DROP_BEHIND=$thr $BIN bench --rw=write --bs=$BS --size=$size --filename=$D/f \
        --policy=hybrid,dontcache --repeat=1 --json=$OUT/r$r-$size-$thr-$BS.json > $OUT/r$r-$size-$thr-$BS.txt 2>&1
      python3 - $OUT/r$r-$size-$thr-$BS.json $r $size $thr <<'PY'
import json,sys
d=json.load(open(sys.argv[1]))
g={x['policy']:x['gbps_median'] for x in d['results']}
s={x['policy']:x['cpu_s_per_gb']['sys'] for x in d['results']}
print(f"round {sys.argv[2]} {sys.argv[3]:>6} drop_behind>={sys.argv[4]:>3}: hybrid {g['hybrid']:.2f} dontcache {g['dontcache']:.2f} ratio {g['hybrid']/g['dontcache']:.3f}  sys/GB {s['hybrid']:.2f} {s['dontcache']:.2f}")
PY
    done
  done
done
