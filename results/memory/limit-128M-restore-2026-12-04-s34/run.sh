#!/bin/sh
# The memory-limited restore against the same job without a limit, interleaved
# (thirty-fourth session).  $1: a directory on an xfs filesystem of a loop
# device with direct I/O on (losetup --direct-io=on), as tests/with_fs.py makes
# one without it; $2: the hybridio binary.
set -e
dir=$1; bin=${2:-build/bin/hybridio}; out=$(dirname "$0")
for round in 1 2 3; do
  for lim in none 128M; do
    arg=""; [ "$lim" = none ] || arg="--memory-limit=$lim"
    HYBRIDIO_STATE_DIR=$(mktemp -d) "$bin" checkpoint --size=256M --bs=4M $arg --repeat=3 --dataset=64M \
      --policy=buffered,direct,dontcache,hybrid --dir="$dir" --json="$out/round$round-$lim.json" \
      > "$out/round$round-$lim.txt" 2>&1
  done
done
