#!/bin/sh
# 64 KiB reads of a 2 GiB file, direct and hybrid, old build against new, interleaved, each
# invocation from an empty learned state.  $1 old hybridio, $2 new, $3 directory, $4 output dir.
set -e
old=$1; new=$2; dir=$3; out=$4
for pair in 1 2 3; do
  for build in old new; do
    bin=$old; [ $build = new ] && bin=$new
    HYBRIDIO_STATE_DIR=$(mktemp -d) $bin bench --name=read-64K --rw=read --bs=64K --size=2G --repeat=3 \
      --policy=direct,hybrid --directory=$dir --json=$out/pair$pair-$build.json > $out/pair$pair-$build.txt 2>&1
  done
done
