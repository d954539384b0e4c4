#!/usr/bin/env bash
# One plain HYBRIDIO_STATS path for a whole program: every process adds its
# counters (stats_file.h), so the file holds what moved - for fio's parent
# and workers, a Python program and the dd it runs, and a shell pipeline.
set -u
. "$(dirname "$0")/lib.sh"

MiB=1048576
# field FILE EXPR: EXPR evaluated over the stats document in FILE, where
# w and r are the bytes written and read on every path, n the processes.
field() {
  "$PY" - "$1" "$2" <<'PYEOF'
import json, sys
s = json.load(open(sys.argv[1]))
w = sum(p["bytes"] for p in s["write"].values())
r = sum(p["bytes"] for p in s["read"].values())
n = s["processes"]
print(eval(sys.argv[2]))
PYEOF
}
expect() {  # expect "what" FILE EXPR: EXPR must be true
  local result
  result=$(field "$2" "$3" 2>&1)
  if [ "$result" = True ]; then ok "$1"; else not_ok "$1 ($3: $result; $(field "$2" '(w, r, n)' 2>&1))"; fi
}

for v in $VARIANTS; do
  dir="$WORK/$v"
  mkdir -p "$dir"
  stats="$dir/stats.json"

  # fio forks a worker per job; its parent moves nothing and exits last.
  env $(variant_env "$v") HYBRIDIO_STATS="$stats" LD_PRELOAD="$SHIM" \
    fio --name=sum --directory="$dir" --ioengine=psync --rw=write --bs=4M --size=64M --numjobs=2 \
        --fsync_on_close=1 --minimal >/dev/null 2>"$dir/fio.err" || not_ok "fio ran [$v]: $(cat "$dir/fio.err")"
  expect "fio, 2 jobs: the file holds both workers' 128 MiB [$v]" "$stats" "w == 128 * $MiB"
  expect "fio: the parent and both workers are counted [$v]" "$stats" "n >= 3"
  rm -f "$stats" "$dir"/sum.*

  # Python writes 32 MiB, runs dd to copy it, and reads the copy.
  env $(variant_env "$v") HYBRIDIO_STATS="$stats" LD_PRELOAD="$SHIM" "$PY" - "$dir" <<'PYEOF'
import os, subprocess, sys
d = sys.argv[1]
block = os.urandom(4 << 20)
fd = os.open(d + "/src", os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
for _ in range(8):
    os.write(fd, block)
os.fsync(fd)
os.close(fd)
subprocess.run(["dd", "if=" + d + "/src", "of=" + d + "/copy", "bs=4M", "status=none"], check=True)
fd = os.open(d + "/copy", os.O_RDONLY)
while os.read(fd, 4 << 20):
    pass
os.close(fd)
PYEOF
  expect "python + dd: 32 MiB written by each [$v]" "$stats" "w == 64 * $MiB"
  expect "python + dd: 32 MiB read by each [$v]" "$stats" "r >= 64 * $MiB"
  expect "python + dd: both processes counted [$v]" "$stats" "n >= 2"
  rm -f "$stats"

  # A pipeline: the first dd reads the file, the second writes the copy.
  env $(variant_env "$v") HYBRIDIO_STATS="$stats" LD_PRELOAD="$SHIM" \
    sh -c "dd if='$dir/src' bs=4M status=none | dd of='$dir/piped' bs=4M iflag=fullblock status=none"
  check "pipeline copy is byte for byte [$v]" cmp "$dir/src" "$dir/piped"
  expect "pipeline: 32 MiB read and 32 MiB written [$v]" "$stats" "w == 32 * $MiB and r >= 32 * $MiB"
  expect "pipeline: the shell and both dd counted [$v]" "$stats" "n >= 3"
  rm -rf "$dir"
done
finish
