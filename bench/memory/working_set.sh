#!/usr/bin/env bash
# bench/memory/working_set.sh - does a checkpoint evict the dataset?
#
#   bench/memory/working_set.sh SHIM DIR [DATASET] [CHECKPOINT] [ROUNDS] [MEMORY]
#
# A DATASET file (default 4G) is read twice with 16 MiB reads, as a data
# loader reads its files every epoch (under the shim the first read leaves
# the page cache and the second is re-use, admitted to it); then a
# CHECKPOINT (default 8G) is written with 4 MiB writes and fsync, plain and
# under the shim, interleaved per round.  After
# each write: how much of the dataset is still cached (fincore), and how
# fast it is read again (GB/s).  Everything runs in a memory cgroup (v1)
# limited to MEMORY (default 6G), the memory a node or container has
# beside its application: without a limit, a machine with more free memory
# than dataset and checkpoint together keeps both.  Caches are dropped
# before every round (root).  Prints one line per run, then the medians.
set -euo pipefail
SHIM=${1:?SHIM}; DIR=${2:?DIR}
DATASET=${3:-4G}; CHECKPOINT=${4:-8G}; ROUNDS=${5:-3}; MEMORY=${6:-6G}
[ "$(id -u)" -eq 0 ] || { echo "working_set.sh: run as root (drop_caches, cgroups)" >&2; exit 2; }
[ -d /sys/fs/cgroup/memory ] || { echo "working_set.sh: needs the cgroup v1 memory controller at /sys/fs/cgroup/memory" >&2; exit 2; }
SHIM=$(realpath "$SHIM")
work=$(mktemp -d "$DIR/working-set.XXXXXX")
cg=/sys/fs/cgroup/memory/hybridio-working-set.$$
mkdir "$cg"
numfmt --from=iec "$MEMORY" >"$cg/memory.limit_in_bytes"
cleanup() { echo 1 >"$cg/memory.force_empty" 2>/dev/null || true; rmdir "$cg" 2>/dev/null || true; rm -rf "$work"; }
trap cleanup EXIT
in_cgroup() { sh -c 'echo $$ >"$0/cgroup.procs" && exec "$@"' "$cg" "$@"; }
dataset_bytes=$(numfmt --from=iec "$DATASET")
ckpt_mib=$(( $(numfmt --from=iec "$CHECKPOINT") >> 20 ))
head -c "$dataset_bytes" /dev/urandom >"$work/dataset"

# The dataset read whole by the variant: plain (empty $1) or under the shim.
read_dataset() { in_cgroup env LD_PRELOAD="$1" dd if="$work/dataset" of=/dev/null bs=16M status=none; }
seconds() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.3f", b - a }'; }
cached_bytes() { fincore --bytes --noheadings --output RES "$1" | tr -d " "; }

for round in $(seq "$ROUNDS"); do
  order="plain shim"; [ $((round % 2)) = 0 ] && order="shim plain"
  for variant in $order; do
    sync; echo 3 >/proc/sys/vm/drop_caches
    preload=""; [ "$variant" = shim ] && preload=$SHIM
    export HYBRIDIO_REUSE_DIR; HYBRIDIO_REUSE_DIR=$(mktemp -d /dev/shm/hybridio-reuse.XXXXXX)  # an empty history, on tmpfs as the default one
    read_dataset "$preload"
    read_dataset "$preload"
    before=$(cached_bytes "$work/dataset")
    t0=$(date +%s.%N)
    in_cgroup env LD_PRELOAD="$preload" dd if=/dev/zero of="$work/checkpoint" bs=4M count=$((ckpt_mib / 4)) conv=fsync status=none
    t1=$(date +%s.%N)
    after=$(cached_bytes "$work/dataset")
    read_dataset "$preload"
    t2=$(date +%s.%N)
    echo "$variant write_s=$(seconds "$t0" "$t1") dataset_cached_before=$before dataset_cached_after=$after reread_s=$(seconds "$t1" "$t2")"
    rm -rf "$work/checkpoint" "$HYBRIDIO_REUSE_DIR"
  done
done | tee "$work/runs.txt"
cp "$work/runs.txt" "$DIR/working-set-runs.txt"

python3 - "$DIR/working-set-runs.txt" "$dataset_bytes" "$ckpt_mib" "$MEMORY" <<'PY'
import collections, statistics, sys
dataset, ckpt = int(sys.argv[2]), int(sys.argv[3]) << 20
runs = collections.defaultdict(lambda: collections.defaultdict(list))
for line in open(sys.argv[1]):
    variant, *fields = line.split()
    for f in fields:
        k, v = f.split("=")
        runs[variant][k].append(float(v))
print(f"\ndataset {dataset / 2**30:.1f} GiB cached, then a {ckpt / 2**30:.1f} GiB checkpoint written (4 MiB writes, fsync), in a memory cgroup of {sys.argv[4]}")
print("| | checkpoint write GB/s | dataset still cached | dataset re-read GB/s |")
print("|---|---|---|---|")
for v in ("plain", "shim"):
    r = runs[v]
    write = statistics.median(ckpt / s / 1e9 for s in r["write_s"])
    kept = statistics.median(a / dataset for a in r["dataset_cached_after"])
    reread = statistics.median(dataset / s / 1e9 for s in r["reread_s"])
    print(f"| {v} | {write:.2f} | {kept:.0%} | {reread:.2f} |")
PY
