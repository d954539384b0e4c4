#!/bin/sh
# Old build against new: the regret matrix's two 64 KiB write cells in its order (below the dirty
# limit, then above it) with one learned state per sequence, as regret_matrix.py runs them;
# sequences interleaved, the first build alternating.  Direct is left out (0.2-0.3 GB/s here at
# 64 KiB).  $1 old hybridio, $2 new, $3 directory, $4 output dir; SIZES overrides "1152M 7G".
set -e
old=$1; new=$2; dir=$3; out=$4
for pair in 1 2; do
  order="old new"; [ $pair = 2 ] && order="new old"
  for build in $order; do
    bin=$old; [ $build = new ] && bin=$new
    state=$(mktemp -d)
    for cell in below:1152M above:7G; do
      where=${cell%%:*}; size=${cell#*:}
      HYBRIDIO_STATE_DIR=$state $bin bench --name=$where-write-64K --rw=write --bs=64K --size=$size --repeat=3 \
        --policy=buffered,dontcache,hybrid --directory=$dir \
        --json=$out/seq$pair-64K$where-$build.json > $out/seq$pair-64K$where-$build.txt 2>&1
    done
    cp $state/* $out/seq$pair-$build.learned
  done
done
