#!/bin/bash
# Interleaved old/new shim: dd 32 x 1 MiB from /dev/zero (no fullblock), beside a looping differential harness; counts short outputs.
OLD=$1 NEW=$2 N=${3:-400} D=${4:-/tmp/ddab}
mkdir -p $D
( while [ ! -e $D/stop ]; do (cd /work/main/build && ctest -R '^preload.differential$' >/dev/null 2>&1); done ) &
sleep 5
so=0; sn=0
for i in $(seq 1 $N); do
  for v in old new; do
    S=$OLD; [ $v = new ] && S=$NEW
    rm -f $D/stream
    HYBRIDIO_LEARN=off HYBRIDIO_POLICY=hybrid LD_PRELOAD=$S dd if=/dev/zero of=$D/stream bs=1M count=32 conv=fsync status=none
    s=$(stat -c %s $D/stream)
    if [ "$s" != 33554432 ]; then [ $v = old ] && so=$((so+1)) || sn=$((sn+1)); echo "run $i $v short: $s"; fi
  done
done
touch $D/stop; wait; rm -f $D/stop
echo "short outputs: old $so of $N, new $sn of $N"
