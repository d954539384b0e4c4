#!/bin/bash
# Main job: hybrid's drop-behind from 4M (old default) or 16M (new), the dontcache policy beside, alternated.
BIN=/work/main/build/bin/hybridio; D=/work/scratch/job; OUT=/work/scratch/ab/job; mkdir -p $OUT $D
for r in $(seq 1 ${1:-3}); do
  order="4M 16M"; [ $((r % 2)) = 0 ] && order="16M 4M"
  for thr in $order; do
    st=$OUT/state-$r-$thr; rm -rf $st; mkdir -p $st
    HYBRIDIO_STATE_DIR=$st HYBRIDIO_DROP_BEHIND=$thr $BIN checkpoint --dir=$D --policy=hybrid,dontcache --repeat=1 --json=$OUT/r$r-$thr.json > $OUT/r$r-$thr.txt 2>&1
    echo "round $r drop_behind>=$thr"; grep -E "^ *(hybrid|dontcache) " $OUT/r$r-$thr.txt
  done
done
