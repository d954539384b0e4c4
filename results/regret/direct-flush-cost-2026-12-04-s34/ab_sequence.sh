#!/bin/sh
# Old build against new, the regret matrix's write cells below the dirty limit in the matrix's
# order (64K, 1M, 4M, 16M) with one learned state per sequence, as regret_matrix.py runs them;
# sequences interleaved, the first build alternating.  $1 old hybridio, $2 new, $3 dir, $4 out.
set -e
old=$1; new=$2; dir=$3; out=$4
for pair in 1 2; do
  order="old new"; [ $pair = 2 ] && order="new old"
  for build in $order; do
    bin=$old; [ $build = new ] && bin=$new
    state=$(mktemp -d)
    for bs in 64K 1M 4M 16M; do
      HYBRIDIO_STATE_DIR=$state $bin bench --name=below-write-$bs --rw=write --bs=$bs --size=1152M --repeat=5 \
        --policy=buffered,direct,dontcache,hybrid --directory=$dir --json=$out/seq$pair-$bs-$build.json > $out/seq$pair-$bs-$build.txt 2>&1
    done
    cp $state/* $out/seq$pair-$build.learned
  done
done
