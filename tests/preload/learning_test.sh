#!/usr/bin/env bash
# Learned thresholds under the shim, from an empty state: a program's own
# write stream (dd, 1 GiB in 4 MiB writes, conv=fsync) is measured, explores
# other paths within its budget (3 % of the bytes by default; checked at 5 %,
# runs are whole calls), and its fsync is charged to the writes it flushed
# (learned.deferred).  Before the shim planned explorations and timed fsync,
# such a stream explored nothing and its fsync was never charged.  The
# bytes are dd's, whichever path each call took.
set -u
. "$(dirname "$0")/lib.sh"

MiB=1048576
count=256
mkdir -p "$WORK/state"
shim hybrid env HYBRIDIO_LEARN=on HYBRIDIO_STATE_DIR="$WORK/state" HYBRIDIO_TRACE="$WORK/trace" \
  dd if=/dev/zero of="$WORK/f" bs=4M count=$count conv=fsync status=none
check "dd wrote $count MiB x 4 under the shim" test "$(stat -c %s "$WORK/f")" -eq $((count * 4 * MiB))
check "the file holds dd's bytes (zeros)" cmp -n $((count * 4 * MiB)) "$WORK/f" /dev/zero

explored=$(stat_sum learned.explored_buffered learned.explored_direct learned.explored_dontcache)
expect "the writes were measured (learned.samples)" "$(stat_sum learned.samples)" -gt $((count / 2))
expect "dd's fsync was seen (fsyncs)" "$(stat_sum fsyncs)" -eq 1
expect "and charged to the writes it flushed (learned.deferred)" "$(stat_sum learned.deferred)" -eq 1
expect "the stream explored other paths (bytes)" "$explored" -gt 0
expect "within 5 % of its bytes" "$((explored * 100 / (count * 4 * MiB)))" -lt 5
explored_lines=$(grep -c "rule=explored" "$WORK/trace")
expect "the trace shows the explored calls" "$explored_lines" -eq "$((explored / (4 * MiB)))"
finish
