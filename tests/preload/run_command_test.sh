#!/usr/bin/env bash
# `hybridio run`: the program's exit status and fatal signal come back
# unchanged, the combined stats prove the shim was there, bad usage is refused.
set -u
. "$(dirname "$0")/lib.sh"
HIO="$BUILD/bin/hybridio"

check "exit status is forwarded" sh -c "'$HIO' run --quiet -- sh -c 'exit 7'; [ \$? -eq 7 ]"
check "a fatal signal is forwarded" sh -c "'$HIO' run --quiet -- sh -c 'kill -TERM \$\$'; [ \$? -eq 143 ]"
check "a missing program is status 127" sh -c "'$HIO' run --quiet -- /nonexistent/prog 2>/dev/null; [ \$? -eq 127 ]"
check "dd under hybridio run" "$HIO" run --quiet --stats "$WORK/run.json" -- \
  dd if=/dev/zero of="$WORK/dd.bin" bs=4M count=16 conv=fsync status=none
check "combined stats show the direct writes" "$PY" -c "
import json, sys
s = json.load(open('$WORK/run.json'))
assert s['schema'] == 'hybridio-run/1' and s['processes'] >= 1, s
assert s['write']['direct']['bytes'] == 64 << 20, s['write']"
check "the summary goes to stderr, the program's output is untouched" \
  sh -c "[ \"\$('$HIO' run -- echo hello 2>/dev/null)\" = hello ]"
check "--policy=buffered keeps everything buffered" "$HIO" run --quiet --policy=buffered --stats "$WORK/b.json" -- \
  dd if=/dev/zero of="$WORK/dd2.bin" bs=4M count=4 status=none
check "buffered run has no direct bytes" "$PY" -c "
import json; s = json.load(open('$WORK/b.json')); assert s.get('write', {}).get('direct', {}).get('bytes', 0) == 0, s"
check "the combined stats echo the settings" "$PY" -c "
import json; s = json.load(open('$WORK/b.json'))['settings']
assert s['policy'] == 'buffered' and s['read-threshold'] == '' and s['quiet'] is True, s"
check "the command's own options are its own (with and without --)" sh -c \
  "'$HIO' run --quiet -- sh -c 'exit 3' --policy=x; [ \$? -eq 3 ] && '$HIO' run --quiet sh -c 'exit 4' --frob; [ \$? -eq 4 ]"
check "--help lists every option" sh -c "'$HIO' run --help | grep -c -e '--policy=P' -e '--write-threshold=SIZE' \
  -e '--read-threshold=SIZE' -e '--include=LIST' -e '--exclude=LIST' -e '--trace=FILE' -e '--config=FILE' \
  -e '--stats=FILE' -e '--quiet' | grep -qx 9"
check "a missing value is refused with status 2" sh -c "'$HIO' run --policy 2>'$WORK/err'; [ \$? -eq 2 ] && grep -q 'needs a value' '$WORK/err'"
check "a bad option is refused with status 2" sh -c "'$HIO' run --policy=fast -- true 2>'$WORK/err'; [ \$? -eq 2 ] && grep -q 'is not valid' '$WORK/err'"
check "no command is refused with status 2" sh -c "'$HIO' run 2>/dev/null; [ \$? -eq 2 ]"
# Write-behind cannot keep POSIX semantics under the shim: refused there
# with one line, and the writes complete within each call.  A removed
# setting (HYBRIDIO_READ_AHEAD) is ignored with one line of its own.
check "write-behind is refused under the shim, in one line; a removed setting warns once" sh -c "
  HYBRIDIO_WRITE_BEHIND=on HYBRIDIO_READ_AHEAD=32M HYBRIDIO_STATS='$WORK/wb.json' LD_PRELOAD='$SHIM' \
    dd if=/dev/zero of='$WORK/wb.bin' bs=4M count=4 status=none 2>'$WORK/wb.err' &&
  [ \$(grep -c 'not available under the LD_PRELOAD shim' '$WORK/wb.err') -eq 1 ] &&
  grep -q HYBRIDIO_WRITE_BEHIND '$WORK/wb.err' &&
  [ \$(grep -c 'HYBRIDIO_READ_AHEAD is a removed setting' '$WORK/wb.err') -eq 1 ]"
check "refused write-behind queued nothing" "$PY" -c "
import json; s = json.load(open('$WORK/wb.json')); assert s['write_behind']['writes'] == 0, s['write_behind']
assert s['write']['direct']['bytes'] == 16 << 20, s['write']"
finish
