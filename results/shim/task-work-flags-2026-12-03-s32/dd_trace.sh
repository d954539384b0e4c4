#!/bin/bash
# dd loop with tracing; stops at the first short file.
T=/sys/kernel/tracing
S=/work/main/build/lib/libhybridio_preload.so
echo 0 > $T/tracing_on; echo > $T/trace; echo 65536 > $T/buffer_size_kb
for e in syscalls/sys_exit_read syscalls/sys_enter_read syscalls/sys_exit_write syscalls/sys_exit_io_uring_enter; do
  echo 'comm == "dd"' > $T/events/$e/filter; echo 1 > $T/events/$e/enable; done
echo 'comm == "dd" || comm ~ "iou-*"' > $T/events/io_uring/filter; echo 1 > $T/events/io_uring/enable
echo 1 > $T/events/task/task_newtask/enable
echo 1 > $T/events/signal/enable
echo 1 > $T/tracing_on
for i in $(seq 1 ${N:-200}); do
  rm -f /tmp/ddt/stream
  HYBRIDIO_LEARN=off HYBRIDIO_POLICY=hybrid LD_PRELOAD=$S dd if=/dev/zero of=/tmp/ddt/stream bs=1M count=32 conv=fsync status=none
  s=$(stat -c %s /tmp/ddt/stream)
  if [ "$s" != 33554432 ]; then echo "run $i short: $s"; echo 0 > $T/tracing_on; cp $T/trace /tmp/ddt/trace.txt; exit 0; fi
  echo > $T/trace
done
echo 0 > $T/tracing_on; echo "no short run in $N"
