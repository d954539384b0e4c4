#!/usr/bin/env bash
# Re-use admission under the shim (docs/policy.md, the `reuse` rule): a data
# loader reads a dataset of 8 files of 16 MiB, each file whole in one
# pread, in another order each epoch, one process per epoch, in a memory
# cgroup (v1) of 512 MiB, with a re-use history of the test's own.
# Epoch 1 leaves the page cache (direct: the files stay cold); epoch 2 reads
# the same data again and is admitted to the cache (reuse.admitted_bytes;
# fincore's mincore shows it resident); epoch 3 is served from memory
# (reuse.hit_bytes, nothing direct).  Every epoch reads the bytes written.
# The same epochs with HYBRIDIO_REUSE_BUDGET=off stay off the cache: the
# checks above can fail.  Root; skipped (77) when no memory cgroup can be made.
set -u
. "$(dirname "$0")/lib.sh"

MiB=1048576
files=8
size=$((16 * MiB))
dataset=$((files * size))
CG=/sys/fs/cgroup/memory/hio-reuse-test.$$
if ! mkdir "$CG" 2>/dev/null || ! echo $((512 * MiB)) >"$CG/memory.limit_in_bytes" 2>/dev/null; then
  rmdir "$CG" 2>/dev/null
  echo "skip: no memory cgroup v1 could be made at $CG (needs root and /sys/fs/cgroup/memory)"
  exit 77
fi
trap 'rmdir "$CG" 2>/dev/null; rm -rf "$WORK"' EXIT

# The dataset, written, synced and dropped from the cache; its digests.
"$PY" - "$WORK/data" $files $size >"$WORK/digests" <<'PYEOF'
import hashlib, os, sys
d, n, size = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
os.makedirs(d)
for i in range(n):
    data = os.urandom(size)
    fd = os.open("%s/%d" % (d, i), os.O_WRONLY | os.O_CREAT, 0o644)
    os.write(fd, data)
    os.fsync(fd)
    os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
    os.close(fd)
    print(i, hashlib.sha256(data).hexdigest())
PYEOF
cat >"$WORK/epoch.py" <<'PYEOF'
import hashlib, os, sys
d, n, epoch = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
for k in range(n):
    i = (k * 3 + epoch) % n  # another order each epoch
    fd = os.open("%s/%d" % (d, i), os.O_RDONLY)
    data = os.pread(fd, os.fstat(fd).st_size, 0)  # the whole file in one read
    os.close(fd)
    print(i, hashlib.sha256(data).hexdigest())
PYEOF
resident() { local total=0 r; for f in "$WORK/data"/*; do r=$(fincore --bytes --noheadings --output RES "$f"); total=$((total + r)); done; echo $total; }
# epoch N BUDGET HISTORY: one epoch in the cgroup under the shim, stats in $WORK/stats.
epoch() {
  reset_stats
  mkdir -p "$WORK/stats" "$3"
  sh -c 'echo $$ >"$0/cgroup.procs" && exec "$@"' "$CG" \
    env HYBRIDIO_POLICY=hybrid HYBRIDIO_READ_THRESHOLD=1M HYBRIDIO_REUSE_BUDGET="$2" HYBRIDIO_REUSE_DIR="$3" \
    HYBRIDIO_STATS="$WORK/stats/stats.%p.json" LD_PRELOAD="$SHIM" "$PY" "$WORK/epoch.py" "$WORK/data" $files "$1" \
    | sort -n >"$WORK/epoch$1.out"
}

expect "the dataset starts cold (resident bytes)" "$(resident)" -lt $((dataset / 20))
epoch 1 auto "$WORK/history"
check "epoch 1 read the bytes written" cmp "$WORK/digests" "$WORK/epoch1.out"
expect "epoch 1 left the page cache (read.direct.bytes)" "$(direct_bytes read)" -ge $((dataset * 9 / 10))
expect "epoch 1: nothing admitted (reuse.admitted_bytes)" "$(stat_sum reuse.admitted_bytes)" -eq 0
expect "epoch 1 left the dataset cold (resident bytes)" "$(resident)" -lt $((dataset / 10))

epoch 2 auto "$WORK/history"
check "epoch 2 read the bytes written" cmp "$WORK/digests" "$WORK/epoch2.out"
expect "epoch 2 was admitted (reuse.admitted_bytes)" "$(stat_sum reuse.admitted_bytes)" -eq $dataset
expect "epoch 2, by the reuse rule (rules.reuse.bytes)" "$(stat_sum rules.reuse.bytes)" -ge $dataset
expect "epoch 2 read nothing direct" "$(direct_bytes read)" -eq 0
expect "epoch 2 left the dataset in memory (resident bytes)" "$(resident)" -ge $((dataset * 9 / 10))
charged=$(awk '/^total_cache / {print $2}' "$CG/memory.stat")
expect "the cgroup holds the dataset's pages (total_cache)" "$charged" -ge $((dataset * 9 / 10))

epoch 3 auto "$WORK/history"
check "epoch 3 read the bytes written" cmp "$WORK/digests" "$WORK/epoch3.out"
expect "epoch 3 was served from memory (reuse.hit_bytes)" "$(stat_sum reuse.hit_bytes)" -ge $((dataset * 9 / 10))
expect "epoch 3 read nothing direct" "$(direct_bytes read)" -eq 0
expect "epoch 3 admitted nothing again" "$(stat_sum reuse.admitted_bytes)" -eq 0

# The same with the budget off, from cold: every epoch leaves the cache.
for f in "$WORK/data"/*; do "$PY" -c 'import os,sys; fd=os.open(sys.argv[1],os.O_RDONLY); os.posix_fadvise(fd,0,0,os.POSIX_FADV_DONTNEED)' "$f"; done
expect "cold again (resident bytes)" "$(resident)" -lt $((dataset / 20))
epoch 1 off "$WORK/history-off"
epoch 2 off "$WORK/history-off"
check "budget off: epoch 2 read the bytes written" cmp "$WORK/digests" "$WORK/epoch2.out"
expect "budget off: epoch 2 left the page cache (read.direct.bytes)" "$(direct_bytes read)" -ge $((dataset * 9 / 10))
expect "budget off: nothing admitted" "$(stat_sum reuse.admitted_bytes)" -eq 0
expect "budget off: the dataset stays cold (resident bytes)" "$(resident)" -lt $((dataset / 10))

finish
