#!/bin/bash
# dd_stream_loop.sh: the preload.coreutils check "a stream of 1 MiB writes goes direct", 40 times, with its stats (SHIM=path overrides the shim).
S=${SHIM:-/work/main/build/lib/libhybridio_preload.so}
for i in $(seq 1 40); do
  rm -f ${OUT:-/tmp}/stream ${OUT:-/tmp}/st.json
  HYBRIDIO_LEARN=off HYBRIDIO_POLICY=hybrid HYBRIDIO_STATS=${OUT:-/tmp}/st.json LD_PRELOAD=$S dd if=/dev/zero of=${OUT:-/tmp}/stream bs=1M count=32 conv=fsync status=none
  d=$(python3 -c "import json; j=json.load(open('${OUT:-/tmp}/st.json')); print(j['write']['direct']['bytes']>>20, j['rules'])")
  echo "$i $d size=$(stat -c %s ${OUT:-/tmp}/stream)"
  sleep 2
done
