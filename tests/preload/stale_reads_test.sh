#!/usr/bin/env bash
# A restore-like stream never returns a stale byte: a process
# without the library or the shim (stale_writer) overwrites, truncates,
# extends and punches the file while stale_reader streams it through the
# library's API and, under the shim, with plain pread - also across a fork
# in the middle of a stream.  Every read is checked exactly against the
# writer's log (tests/adversarial/stale_log.h); the reader has handlers for
# SIGIO and every realtime signal, and none may run.
set -u
. "$(dirname "$0")/lib.sh"
READER="$BUILD/bin/stale_reader"
WRITER="$BUILD/bin/stale_writer"
SECONDS_EACH=4

for fork in "" --fork; do
  check "library API${fork:+, $fork}: no stale byte" \
    "$READER" --api library --writer "$WRITER" --dir "$WORK" --seconds $SECONDS_EACH $fork
  rm -f "$WORK/shim.json"
  check "under the shim${fork:+, $fork}: no stale byte" env HYBRIDIO_STATS="$WORK/shim.json" LD_PRELOAD="$SHIM" \
    "$READER" --api plain --writer "$WRITER" --dir "$WORK" --seconds $SECONDS_EACH $fork
done
finish
