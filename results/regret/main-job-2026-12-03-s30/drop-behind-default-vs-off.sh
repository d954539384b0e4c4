#!/usr/bin/env bash
# Main job, hybrid and dontcache policies, drop-behind default (16M) against off, rounds alternated.
set -u
out=$1; rounds=${2:-3}
for r in $(seq 1 $rounds); do
  for v in default off; do
    st=$(mktemp -d /work/scratch/st.XXXX)
    if [ $v = off ]; then export HYBRIDIO_DROP_BEHIND=off; else unset HYBRIDIO_DROP_BEHIND; fi
    echo "=== round $r variant $v" >> $out
    HYBRIDIO_STATE_DIR=$st /work/main/build/bin/hybridio checkpoint --dir=/work/scratch/job2 --policy=hybrid,dontcache --repeat=1 2>&1 | grep -E "^(hybrid|dontcache) |hybrid vs the best|round by round" >> $out
    rm -rf $st
  done
done
echo done >> $out
