#!/usr/bin/env bash
# HYBRIDIO_TRACE under the shim: one line for every large call the policy
# decided, whichever path it took - the calls the shim runs itself through
# the cache or uncached as well as the direct ones the library runs.  Under
# the buffered policy the shim leaves every call to libc: nothing is decided.
set -u
. "$(dirname "$0")/lib.sh"

MiB=1048576
# lines TRACE OP: the trace's lines for OP calls of 4 MiB, as "path/rule" counts.
lines() {
  "$PY" - "$1" "$2" <<'PYEOF'
import collections, sys
counts = collections.Counter()
for line in open(sys.argv[1]):
    kv = dict(field.split("=", 1) for field in line.split() if "=" in field)
    if kv.get("op") == sys.argv[2] and kv.get("len") == str(4 << 20):
        counts[kv["path"] + "/" + kv["rule"]] += 1
print(sum(counts.values()), dict(counts))
PYEOF
}
expect_lines() {  # expect_lines "what" TRACE OP TEST N: the count of 4 MiB OP lines is TEST (-eq, -ge) N
  local got
  got=$(lines "$2" "$3" 2>&1)
  expect "$1 [${got#* }]" "${got%% *}" "$4" "$5"
}

for policy in hybrid dontcache direct; do
  trace="$WORK/trace.$policy"
  HYBRIDIO_POLICY=$policy HYBRIDIO_TRACE="$trace" LD_PRELOAD="$SHIM" \
    dd if=/dev/zero of="$WORK/f.$policy" bs=4M count=8 conv=fsync status=none
  expect_lines "every 4 MiB write is traced [$policy]" "$trace" write -eq 8
  echo 3 > /proc/sys/vm/drop_caches 2>/dev/null || true
  HYBRIDIO_POLICY=$policy HYBRIDIO_TRACE="$trace" LD_PRELOAD="$SHIM" \
    dd if="$WORK/f.$policy" of=/dev/null bs=4M status=none
  # A read may be traced in two parts (its cached part, then the rest).
  expect_lines "every 4 MiB read is traced [$policy]" "$trace" read -ge 8
  rm -f "$WORK/f.$policy"
done

trace="$WORK/trace.buffered"
HYBRIDIO_POLICY=buffered HYBRIDIO_TRACE="$trace" LD_PRELOAD="$SHIM" \
  dd if=/dev/zero of="$WORK/f.buffered" bs=4M count=8 conv=fsync status=none
expect_lines "the buffered policy decides nothing" "$trace" write -eq 0
finish
