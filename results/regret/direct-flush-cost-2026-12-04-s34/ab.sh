#!/bin/sh
# Old build against new, the regret matrix's write cells below the dirty limit, each invocation
# from an empty learned state, interleaved.  $1 old hybridio, $2 new, $3 directory, $4 output dir.
set -e
old=$1; new=$2; dir=$3; out=$4; sizes=${SIZES:-"4M 16M"}
for pair in 1 2 3; do
  for bs in $sizes; do
    for build in old new; do
      bin=$old; [ $build = new ] && bin=$new
      HYBRIDIO_STATE_DIR=$(mktemp -d) $bin bench --name=below-write-$bs --rw=write --bs=$bs --size=1152M --repeat=5 \
        --policy=buffered,direct,dontcache,hybrid --directory=$dir --json=$out/pair$pair-$bs-$build.json > $out/pair$pair-$bs-$build.txt 2>&1
    done
  done
done
