#!/usr/bin/env bash
# Drop-behind writes under the shim (docs/architecture.md): dd's 16 MiB
# writes of 512 MiB, from an empty learned state (writes start uncached), go
# through the page cache and are written back and dropped behind the calls.
# The file holds dd's bytes, its fsync succeeds, and once dd has exited,
# with or without conv=fsync, the only pages of it left in the cache are
# those of the writes the learner sent through the cache (its exploration),
# where a plain dd leaves them all cached.
set -u
. "$(dirname "$0")/lib.sh"

MiB=1048576
count=32
resident() { fincore --bytes --noheadings --output RES "$1"; }
# shim_copy FILE DD_ARGS...: dd copies src to FILE under the shim, from an
# empty learned state, with the stats counted afresh.
shim_copy() {
  local file=$1; shift
  reset_stats
  rm -rf "$WORK/state"; mkdir -p "$WORK/state"
  shim hybrid env HYBRIDIO_LEARN=on HYBRIDIO_STATE_DIR="$WORK/state" \
    dd if="$WORK/src" of="$file" bs=16M count=$count status=none "$@"
}
# expect_dropped WHAT FILE: before anything reads FILE back, its pages left
# in the cache are those of the writes sent through it, and a racing folio
# or two.
expect_dropped() {
  local left; left=$(resident "$2")
  expect "$1 (resident: $left bytes)" "$left" -le $(($(stat_sum write.buffered.bytes) + MiB))
}
dd if=/dev/urandom of="$WORK/src" bs=16M count=$count iflag=fullblock status=none
shim_copy "$WORK/f" conv=fsync
dropped=$(stat_sum drop_behind.bytes)
uncached=$(stat_sum write.dontcache.bytes)
expect "its writes dropped behind (drop_behind.bytes)" "$dropped" -gt $((count * 8 * MiB))
expect "counted as uncached writes" "$dropped" -eq "$uncached"
expect "no file refused to be opened again" "$(stat_sum drop_behind.refused)" -eq 0
expect_dropped "their pages left the cache" "$WORK/f"
check "dd copied $count x 16 MiB under the shim" cmp "$WORK/src" "$WORK/f"

# Without conv=fsync, dd closes the file as soon as its last write returns,
# and exits: the shim's close waits for the worker to have opened the file
# for every write through it, and exit() for their pages to be dropped.
shim_copy "$WORK/g"
expect "without fsync, its writes dropped behind too" "$(stat_sum drop_behind.bytes)" -gt $((count * 8 * MiB))
expect_dropped "without fsync, their pages left the cache" "$WORK/g"
check "dd copied $count x 16 MiB without fsync" cmp "$WORK/src" "$WORK/g"

# The checks above can fail: the same copy without the shim stays cached.
dd if="$WORK/src" of="$WORK/plain" bs=16M count=$count conv=fsync status=none
plain_left=$(resident "$WORK/plain")
expect "a plain dd leaves its pages cached (resident: $plain_left bytes)" "$plain_left" -gt $((count * 16 * MiB * 9 / 10))
finish
