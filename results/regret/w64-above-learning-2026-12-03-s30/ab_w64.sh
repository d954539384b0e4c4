#!/usr/bin/env bash
# 64 KiB writes of a 7 GiB file (above the dirty limit): buffered and hybrid in one
# invocation (5 interleaved reps, fresh learned state), learning on against off, alternated.
set -u
out=$1; rounds=${2:-2}
for r in $(seq 1 $rounds); do
  for L in on off; do
    st=$(mktemp -d /work/scratch/st.XXXX)
    HYBRIDIO_LEARN=$L HYBRIDIO_STATE_DIR=$st /work/main/build/bin/hybridio bench --name=w64 --rw=write --bs=64K --size=7G \
      --repeat=5 --policy=buffered,hybrid --directory=/work/scratch/w64 --json=/work/scratch/w64-r$r-$L.json >/dev/null 2>&1
    python3 - "$r" "$L" /work/scratch/w64-r$r-$L.json >> $out <<'PY'
import json, statistics, sys
r, L, f = sys.argv[1:]
d = json.load(open(f))
g = {x['policy']: [y['gbps'] for y in x['runs']] for x in d['results']}
s = {x['policy']: [y['sys_s'] for y in x['runs']] for x in d['results']}
med = {p: statistics.median(v) for p, v in g.items()}
rr = statistics.median(h / b for h, b in zip(g['hybrid'], g['buffered']))
print("round %s learn=%-3s buffered %.3f hybrid %.3f ratio %.2f round-by-round %.2f  hybrid runs %s  sys b %s h %s" % (
    r, L, med['buffered'], med['hybrid'], med['hybrid'] / med['buffered'], rr,
    [round(x, 2) for x in g['hybrid']], [round(x, 1) for x in s['buffered']], [round(x, 1) for x in s['hybrid']]))
PY
    rm -rf $st
  done
done
echo done >> $out
