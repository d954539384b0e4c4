#!/bin/sh
# bench/probes/ab_sequence.sh OLD_HYBRIDIO NEW_HYBRIDIO DIR OUT (bench/probes/README.md)
# Old build against new, write cells of the regret matrix in its order with one learned state per
# sequence, as regret_matrix.py runs them; sequences interleaved, the first build alternating.
# $1 old hybridio, $2 new, $3 dir, $4 out.  CELLS: "label:size:bs ..." in order (default: the
# cells below the dirty limit, 64K to 16M, labelled by request size); POLICIES and REPEAT go to
# hybridio bench.
set -e
old=$1; new=$2; dir=$3; out=$4
cells=${CELLS:-"64K:1152M:64K 1M:1152M:1M 4M:1152M:4M 16M:1152M:16M"}
policies=${POLICIES:-buffered,direct,dontcache,hybrid}
for pair in 1 2; do
  order="old new"; [ $pair = 2 ] && order="new old"
  for build in $order; do
    bin=$old; [ $build = new ] && bin=$new
    state=$(mktemp -d)
    for cell in $cells; do
      label=${cell%%:*}; rest=${cell#*:}; size=${rest%%:*}; bs=${rest#*:}
      HYBRIDIO_STATE_DIR=$state $bin bench --name=write-$label --rw=write --bs=$bs --size=$size --repeat=${REPEAT:-5} \
        --policy=$policies --directory=$dir --json=$out/seq$pair-$label-$build.json > $out/seq$pair-$label-$build.txt 2>&1
    done
    cp $state/* $out/seq$pair-$build.learned
  done
done
