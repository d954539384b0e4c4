#!/bin/sh
# /init of the hybridfs test VM (busybox).  Run by run-vm-tests.sh; prints
# "PASS <name>" / "FAIL <name>: <why>" lines on the console, then ends the
# VM through isa-debug-exit.  It must never exit (the kernel would panic).
# Knobs from the kernel command line: hfs_ops=<integrity ops> hfs_perf=<MiB>
# hfs_powercut=0|1 (run powercut.sh) hfs_only=powercut (nothing else)
# hfs_pc_break=nofsync|early (powercut.sh's deliberate breakage)
# hfs_dontcache=0|1 (the kernel's headers have IOCB_DONTCACHE: what the
# module must then report and do).
# The modules are loaded in the order of /lib/modules/boot.order (written
# by run-vm-tests.sh from each module's dependencies; a module the kernel
# has built in is not there).

# The console's first line follows the firmware's terminal escapes: start
# with an empty one so that no PASS/FAIL line is glued to them.
echo
/bin/busybox mkdir -p /proc /sys /dev /tmp /mnt/h /lower /sbin /usr/bin /usr/sbin
/bin/busybox --install -s
export PATH=/bin:/sbin:/usr/bin:/usr/sbin
mount -t proc proc /proc
mount -t sysfs sysfs /sys
mount -t devtmpfs devtmpfs /dev
mount -t tmpfs tmpfs /tmp

T=/bin/hfs_test
OPS=10000
PERF=128
POWERCUT=0
ONLY=all
PC_BREAK=none
PC_USER=1
DONTCACHE=0
for arg in $(cat /proc/cmdline); do
	case "$arg" in
	hfs_ops=*) OPS=${arg#hfs_ops=} ;;
	hfs_perf=*) PERF=${arg#hfs_perf=} ;;
	hfs_powercut=*) POWERCUT=${arg#hfs_powercut=} ;;
	hfs_only=*) ONLY=${arg#hfs_only=} ;;
	hfs_pc_break=*) PC_BREAK=${arg#hfs_pc_break=} ;;
	hfs_pc_user=*) PC_USER=${arg#hfs_pc_user=} ;;
	hfs_dontcache=*) DONTCACHE=${arg#hfs_dontcache=} ;;
	esac
done

pass() { echo "PASS $1"; }
fail() { echo "FAIL $1: $2"; }
# check <name> <why-if-failed> <command...>
check() {
	name=$1; why=$2; shift 2
	if "$@"; then pass "$name"; else fail "$name" "$why"; fi
}
kernel_log() {
	dmesg | grep -i hybridfs | sed 's/^/dmesg: /' | head -20
	BAD=$(dmesg | grep -E 'BUG|WARNING|Oops|lockdep|circular locking|general protection|Call Trace|blocked for more than|Objects remaining|Poison overwritten|Redzone|kmemleak')
	if [ -n "$BAD" ]; then
		echo "$BAD" | sed 's/^/dmesg-bad: /' | head -40
		fail kernel-log "BUG/WARNING/Oops in the kernel log"
	else
		pass kernel-log
	fi
}
powercut() {
	if [ "$POWERCUT" = 1 ]; then
		PCSTART=$(date +%s)
		sh /bin/powercut.sh break=$PC_BREAK user=$PC_USER
		echo "powercut: $(( $(date +%s) - PCSTART )) s"
	fi
}
finish() {
	echo "VM-DONE"
	$T exit 0
	while :; do sleep 100; done
}

for m in $(cat /lib/modules/boot.order); do
	insmod /lib/modules/$m.ko || fail boot "insmod $m"
done
i=0
while [ ! -b /dev/vda ] && [ $i -lt 100 ]; do sleep 0.1; i=$((i + 1)); done
if ! mount -t ext4 /dev/vda /lower; then
	fail boot "cannot mount the ext4 disk"
	finish
fi
mkdir -p /lower/data
if [ "$ONLY" = powercut ]; then
	powercut
	kernel_log
	finish
fi

# ---- module load, options ----
check module-load "insmod failed" insmod /lib/modules/hybridfs.ko
check module-registered "not in /proc/filesystems" grep -qw hybridfs /proc/filesystems
$T badmount /lower/data /mnt/h
check badmount-log-policy "no kernel log line" sh -c "dmesg | grep -q \"hybridfs: bad policy 'bogus'\""
check badmount-log-size "no kernel log line" sh -c "dmesg | grep -q \"hybridfs: bad size '12Q' for write_threshold\""
check badmount-log-unknown "no kernel log line" sh -c "dmesg | grep -q \"hybridfs: Unknown parameter 'no_such_option'\""

# ---- namespace operations and the randomized integrity test ----
mount -t hybridfs -o write_threshold=256K,read_threshold=512K /lower/data /mnt/h ||
	fail mount "mount hybridfs"
check mount-options-shown "options not in /proc/mounts" \
	grep -q "hybridfs .*policy=hybrid,write_threshold=262144,read_threshold=524288" /proc/mounts
ID=$($T devid /mnt/h)
check sysfs-dir "no /sys/fs/hybridfs/$ID" test -r /sys/fs/hybridfs/$ID/stats
check sysfs-lower "lower not /lower/data" sh -c "test \"\$(cat /sys/fs/hybridfs/$ID/lower)\" = /lower/data"
# Every size tunable (HFS_SIZE_TUNABLES in hybridfs.h) under its own name:
# the module parameters show the four different defaults, the sysfs files
# the mount's values, and a write reaches that one tunable and no other.
P=/sys/module/hybridfs/parameters
check module-param-sizes "a size parameter is missing or shows another's default" sh -c "
	test \$(cat $P/write_threshold) = 2097152 && test \$(cat $P/read_threshold) = 8388608 &&
	test \$(cat $P/sync_write_threshold) = 262144 && test \$(cat $P/stream_threshold) = 1048576"
F=/sys/fs/hybridfs/$ID
check sysfs-size-tunables "a size tunable file is missing or shows another's value" sh -c "
	test \$(cat $F/write_threshold) = 262144 && test \$(cat $F/read_threshold) = 524288 &&
	test \$(cat $F/sync_write_threshold) = 262144 && test \$(cat $F/stream_threshold) = 1048576"
check sysfs-size-store "a write did not reach exactly its tunable" sh -c "
	echo 4M > $F/sync_write_threshold && test \$(cat $F/sync_write_threshold) = 4194304 &&
	test \$(cat $F/write_threshold) = 262144 && grep -q 'sync_write_threshold=4194304' /proc/mounts &&
	echo 256K > $F/sync_write_threshold"
$T fsops /mnt/h /lower/data
$T integrity /mnt/h /lower/data $OPS 1
S=/sys/fs/hybridfs/$ID/stats
grep -E '^(write|read)_(direct|buffered)_requests|^splits|^fallback' $S | tr '\n' ' '; echo
check integrity-used-direct "no direct writes" sh -c "test \$(awk '/^write_direct_requests/ {print \$2}' $S) -gt 100"
check integrity-used-direct-reads "no direct reads" sh -c "test \$(awk '/^read_direct_requests/ {print \$2}' $S) -gt 10"
check integrity-used-splits "no splits" sh -c "test \$(awk '/^splits/ {print \$2}' $S) -gt 10"
check integrity-no-errors "lower I/O errors" sh -c "test \$(awk '/^errors/ {print \$2}' $S) -eq 0"
# The same workload with every aligned body forced direct, after a remount.
check remount-direct "remount failed" mount -o remount,policy=direct /mnt/h
check remount-shown "policy not updated" sh -c "test \$(cat /sys/fs/hybridfs/$ID/policy) = direct"
$T integrity /mnt/h /lower/data $((OPS / 4)) 2 | sed 's/^PASS integrity/PASS integrity-direct/; s/^FAIL integrity/FAIL integrity-direct/'
mount -o remount,policy=hybrid,write_threshold=2M,read_threshold=8M /mnt/h

# ---- concurrency smoke test (its verdict is mostly the kernel log scan) ----
$T stress /mnt/h 6

# ---- decisions and permissions ----
echo 1 > /sys/fs/hybridfs/$ID/reset_stats
$T decisions /mnt/h
$T perms /mnt/h /lower/data

# ---- the policy table libhybridio's unit tests run, run in this kernel ----
if insmod /lib/modules/hfs_policy_test.ko; then
	rmmod hfs_policy_test
	check policy-table "no result line" sh -c "dmesg | grep -q 'hfs_policy_test: [1-9][0-9]* passed, 0 failed'"
else
	fail policy-table "$(dmesg | grep hfs_policy_test | tail -n 5 | tr '\n' ' ')"
fi

# ---- the uncached path (IOCB_DONTCACHE), through the page cache state ----
if [ "$DONTCACHE" = 1 ]; then
	check features-dontcache "not in /sys/fs/hybridfs/features" grep -qw dontcache /sys/fs/hybridfs/features
else
	check features-no-dontcache "claimed in /sys/fs/hybridfs/features" sh -c '! grep -qw dontcache /sys/fs/hybridfs/features'
fi
check remount-dontcache "remount failed" mount -o remount,policy=dontcache /mnt/h
$T uncached /mnt/h /lower/data $DONTCACHE

# ---- the re-use rule: read twice is cached, read once is not ----
check remount-reuse "remount failed" mount -o remount,policy=hybrid,read_threshold=512K /mnt/h
$T reuse /mnt/h /lower/data
mount -o remount,policy=hybrid,write_threshold=2M,read_threshold=8M /mnt/h

# ---- lifecycle: unload refused while in use, cycles, leaks, reload ----
check rmmod-refused-mounted "rmmod succeeded while mounted" sh -c '! rmmod hybridfs 2>/dev/null'
check umount "umount failed" umount /mnt/h
check sysfs-removed "sysfs dir left" test ! -e /sys/fs/hybridfs/$ID
ok=1
i=0
while [ $i -lt 20 ]; do
	mount -t hybridfs /lower/data /mnt/h || ok=0
	echo "cycle $i" > /mnt/h/cycle || ok=0
	grep -q "cycle $i" /lower/data/cycle || ok=0
	umount /mnt/h || ok=0
	i=$((i + 1))
done
check mount-cycles "a mount/umount cycle failed" test $ok = 1
mount -t hybridfs /lower/data /mnt/h
$T holdopen /mnt/h/cycle 600 &
HOLD=$!
sleep 0.5
check umount-busy-refused "umount succeeded with an open file" sh -c '! umount /mnt/h 2>/dev/null'
umount -l /mnt/h
check rmmod-refused-open "rmmod succeeded with an open file" sh -c '! rmmod hybridfs 2>/dev/null'
kill $HOLD
wait $HOLD 2>/dev/null
sync
sleep 0.5
slab_objs() { awk '/^hybridfs_/ { n += $2 } END { print n + 0 }' /proc/slabinfo; }
i=0
while [ "$(slab_objs)" != 0 ] && [ $i -lt 30 ]; do sleep 0.1; i=$((i + 1)); done
grep '^hybridfs_' /proc/slabinfo | awk '{ print "slab", $1, "active", $2 }' | tr '\n' ' '; echo
check slab-no-leaks "objects left in hybridfs caches: $(slab_objs)" test "$(slab_objs)" = 0
check rmmod "rmmod failed after umount" rmmod hybridfs
check unregistered "still in /proc/filesystems" sh -c '! grep -qw hybridfs /proc/filesystems'
check module-reload "insmod after rmmod failed" insmod /lib/modules/hybridfs.ko
mount -t hybridfs /lower/data /mnt/h
check reload-mount "data not visible after reload" grep -q "cycle 19" /mnt/h/cycle

# ---- throughput (reported, not asserted) ----
if [ "$PERF" -gt 0 ]; then
	$T perf /mnt/h /lower/data $PERF
fi
umount /mnt/h
check rmmod-final "final rmmod failed" rmmod hybridfs

# ---- a power cut after fsync, on a second disk (powercut.sh) ----
powercut

# ---- kernel log ----
kernel_log
finish
