#!/usr/bin/env bash
# Drop-behind writes under the shim (docs/architecture.md): dd's 16 MiB
# writes of 512 MiB, from an empty learned state (writes start uncached), go
# through the page cache and are written back and dropped behind the calls.
# The file holds dd's bytes, its fsync succeeds, and its pages are gone
# from the cache once dd has exited, where a plain dd leaves them cached.
set -u
. "$(dirname "$0")/lib.sh"

MiB=1048576
count=32
resident() { fincore --bytes --noheadings --output RES "$1"; }
mkdir -p "$WORK/state"
dd if=/dev/urandom of="$WORK/src" bs=16M count=$count iflag=fullblock status=none
shim hybrid env HYBRIDIO_LEARN=on HYBRIDIO_STATE_DIR="$WORK/state" \
  dd if="$WORK/src" of="$WORK/f" bs=16M count=$count conv=fsync status=none
dropped=$(stat_sum drop_behind.bytes)
uncached=$(stat_sum write.dontcache.bytes)
expect "its writes dropped behind (drop_behind.bytes)" "$dropped" -gt $((count * 8 * MiB))
expect "counted as uncached writes" "$dropped" -eq "$uncached"
expect "no file refused to be opened again" "$(stat_sum drop_behind.refused)" -eq 0
# Before anything reads the file back into the cache.
left=$(resident "$WORK/f")
expect "their pages left the cache (resident: $left bytes)" "$left" -lt $((count * 16 * MiB / 10))
check "dd copied $count x 16 MiB under the shim" cmp "$WORK/src" "$WORK/f"

# The check above can fail: the same copy without the shim stays cached.
dd if="$WORK/src" of="$WORK/plain" bs=16M count=$count conv=fsync status=none
plain_left=$(resident "$WORK/plain")
expect "a plain dd leaves its pages cached (resident: $plain_left bytes)" "$plain_left" -gt $((count * 16 * MiB * 9 / 10))
finish
