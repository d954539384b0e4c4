#!/bin/sh
# powercut.sh - the power-cut test inside the test VM (run by vm-init.sh;
# docs/crash.md).  Each case, alone: copies the clean file system of
# /dev/vdb to /dev/vdd, stacks "pc" (linear, switched to dm-flakey to cut)
# over "pclog" (dm-log-writes over /dev/vdb, logging every write to
# /dev/vdc), mounts the ext4 (and hybridfs over it), writes one file through
# the LD_PRELOAD shim, libhybridio's API or hybridfs, checks the route it
# took, and after the writer's fsyncs cuts the power twice over:
#  1. pc is switched to dm-flakey drop_writes (every write from then on is
#     acknowledged and thrown away), the file systems are unmounted, the
#     plain table is put back, the ext4 is remounted (journal replayed) and
#     the file is checked with `powercut check`, then deleted;
#  2. the case's log is replayed onto /dev/vdd up to the last flush before
#     the cut (`powercut replay`: a device with a volatile write cache loses
#     what was never flushed), mounted and checked the same way.
# Prints PASS/FAIL lines.
#
# Arguments: break=nofsync (the writers skip every fsync) or break=early (the
# power is cut before the writers run): both must make the checks FAIL; they
# exist to show by hand that the test would notice broken durability.
# user=0 leaves out the cases of the shim and the library on the ext4 (1-7):
# they test no kernel code of ours, so one kernel runs them.

PC=/bin/powercut
DEV=/dev/vdb
LOGDEV=/dev/vdc
REPLAYDEV=/dev/vdd
MNT=/pc
HMNT=/mnt/pc
RMNT=/pc-replay
BREAK=${1#break=}
USER_CASES=${2#user=}
PRELOAD=/lib/x86_64-linux-gnu/libhybridio_preload.so

pass() { echo "PASS $1"; }
fail() { echo "FAIL $1: $2"; }
check() {
	name=$1; why=$2; shift 2
	if "$@"; then pass "$name"; else fail "$name" "$why"; fi
}

mkdir -p $MNT $HMNT $RMNT
for m in $(cat /lib/modules/dm.order); do
	insmod /lib/modules/$m.ko || { fail powercut-setup "insmod $m"; exit 0; }
done
insmod /lib/modules/hybridfs.ko || { fail powercut-setup "insmod hybridfs"; exit 0; }
export DM_DISABLE_UDEV=1
SECTORS=$(cat /sys/block/${DEV#/dev/}/size 2>/dev/null)
if [ -z "$SECTORS" ] || [ "$SECTORS" = 0 ] || [ ! -b $LOGDEV ] || [ ! -b $REPLAYDEV ]; then
	fail powercut-setup "no $DEV, $LOGDEV or $REPLAYDEV (the test's disks)"
	exit 0
fi
UP="0 $SECTORS linear /dev/mapper/pclog 0"
DROP="0 $SECTORS flakey /dev/mapper/pclog 0 0 3600 1 drop_writes"
DM=/dev/mapper/pc
# No periodic writeback: dirty pages stay in memory until an fsync.
echo 0 >/proc/sys/vm/dirty_writeback_centisecs
NOFSYNC=""
[ "$BREAK" = nofsync ] && NOFSYNC=nofsync
S=/tmp/pc-
SHIM="LD_PRELOAD=$PRELOAD"

# The cut: a mark in the log (where cut 2 cuts), then drop_writes (cut 1).
# --nolockfs: a suspend would otherwise freeze the ext4, which writes back
# everything and so makes unsynced data durable.
cut_power() { # <mark>
	dmsetup message pclog 0 mark $1 &&
	dmsetup suspend --nolockfs pc && dmsetup load pc --table "$DROP" && dmsetup resume pc
}
recoveries() { dmesg | grep -c 'recovery complete'; }
# A writer's io_uring ring is torn down after the process has gone (in a
# kernel worker), holding its files until then: umount may be busy briefly.
unmount() {
	i=0
	while ! umount $1 2>/dev/null; do
		i=$((i + 1))
		[ $i -lt 100 ] || { umount $1; return 1; }
		sleep 0.1
	done
}

# run_case <case> <file-id> <method> <shape> <ext4-dir or "hfs:<policy>"> <route check>
#          [VAR=value...]
# One case from a clean file system to both checks; the route check is a
# command run after the writer (it sees $C, the case's stats file $J).
run_case() {
	C=$1; id=$2; method=$3; shape=$4; where=$5; route=$6; shift 6
	J=$S$C.json
	cname=powercut-$C
	expect=""
	[ "$C" = control-nofsync ] && expect=expect-loss
	# The replay's starting point: the file system as it is now.
	dd if=$DEV of=$REPLAYDEV bs=1M 2>/dev/null || { fail $cname "copy to $REPLAYDEV"; return; }
	if ! { dmsetup create pclog --table "0 $SECTORS log-writes $DEV $LOGDEV" &&
	       dmsetup create pc --table "$UP"; } >/tmp/dmsetup.log 2>&1; then
		fail $cname "dmsetup create: $(cat /tmp/dmsetup.log)"
		return
	fi
	# commit=300: no periodic journal commit makes anything durable by chance.
	mount -t ext4 -o commit=300 $DM $MNT || { fail $cname "cannot mount the ext4"; return; }
	dir=$MNT/${where#hfs:}
	mkdir -p $dir
	wdir=$dir
	if [ "${where#hfs:}" != "$where" ]; then
		mount -t hybridfs -o policy=${where#hfs:} $dir $HMNT || fail $cname "cannot mount hybridfs"
		HSTATS=/sys/fs/hybridfs/$(/bin/hfs_test devid $HMNT)/stats
		wdir=$HMNT
	fi
	# The control's file exists durably, so its check sees lost data.
	[ -n "$expect" ] && touch $dir/$C
	sync
	[ "$BREAK" = early ] && cut_power $C
	flag=$NOFSYNC
	[ -n "$expect" ] && flag=nofsync
	rm -f $J
	if env HYBRIDIO_STATS=$J "$@" $PC write $wdir/$C $id $method $shape $flag >$S$C.log 2>&1; then
		[ "$route" = - ] || check $cname-route "$(cat $J 2>/dev/null | tr -s ' \n' ' ' | cut -c 1-600)" \
			eval "$route"
	else
		fail $cname-write "$(tr '\n' ' ' <$S$C.log)"
	fi
	[ "$BREAK" = early ] || cut_power $C || fail $cname "dmsetup could not mark or cut"
	[ "$wdir" = $HMNT ] && { unmount $HMNT || fail $cname "umount hybridfs"; }
	unmount $MNT || fail $cname "umount the ext4"
	dmsetup suspend pc && dmsetup load pc --table "$UP" && dmsetup resume pc ||
		fail $cname "dmsetup could not restore the table"
	# Cut 1: the ext4 after drop_writes, its journal replayed.
	n=$(recoveries)
	if mount -t ext4 $DM $MNT 2>/tmp/mount.err; then
		if [ "$(recoveries)" -gt "$n" ]; then
			$PC check $cname $dir/$C $id $shape $expect
		else
			fail $cname "the remount found a clean file system: nothing was cut"
		fi
		rm -f $dir/$C
		unmount $MNT
	else
		fail $cname "cannot mount the ext4 after the cut: $(cat /tmp/mount.err) $(dmesg | tail -n 3 | tr '\n' ' ')"
	fi
	dmsetup remove pc && dmsetup remove pclog || fail $cname "dmsetup remove"
	# Cut 2: the log up to the last flush before the mark, on the copy.
	if $PC replay $LOGDEV $REPLAYDEV $C >$S$C.replay; then
		n=$(recoveries)
		if mount -t ext4 $REPLAYDEV $RMNT; then
			if [ "$(recoveries)" -gt "$n" ]; then
				$PC check $cname-replay $RMNT${dir#$MNT}/$C $id $shape $expect
			else
				fail $cname-replay "the replayed file system was clean: nothing was cut"
			fi
			unmount $RMNT
		else
			fail $cname-replay "cannot mount the replayed ext4"
		fi
	else
		sed "s/powercut-replay/$cname-replay/" $S$C.replay
	fi
}

# One number from a libhybridio stats file: the first "<key>": N on the line
# that starts with "<line-key>" (anywhere for "").
jnum() { # <line-key or ""> <key>
	if [ -n "$1" ]; then grep "^  \"$1\":" $J; else cat $J; fi |
		grep -o "\"$2\": {*\"*[a-z]*\"*:* *[0-9]*" | head -n 1 | grep -o '[0-9]*$'
}
# Bytes written on <path> (buffered, direct).
wbytes() {
	grep '^  "write":' $J | sed "s/.*\"$1\": {\"requests\": [0-9]*, \"bytes\": \([0-9]*\)}.*/\1/"
}
hstat() { awk -v k="$1" '$1 == k { print $2 }' "$HSTATS"; }
gt0() { [ -n "$1" ] && [ "$1" -gt 0 ]; }
is0() { [ "$1" = 0 ]; }

if [ "$USER_CASES" != 0 ]; then
# ---- the shim (LD_PRELOAD, plain pwrite/fsync) on the ext4 ----
run_case shim-direct 1 pwrite aligned shim 'gt0 $(wbytes direct) && is0 $(wbytes buffered)' \
	$SHIM HYBRIDIO_POLICY=direct
# Under HYBRIDIO_POLICY=buffered the shim looks at no request (plain libc):
# the shim's buffered route is hybrid below its thresholds (rule "small"),
# learning off (a new filesystem's first run would be explored off the cache).
run_case shim-buffered 2 pwrite aligned shim \
	'gt0 $(wbytes buffered) && is0 $(wbytes direct) && gt0 $(jnum rules small)' \
	$SHIM HYBRIDIO_POLICY=hybrid HYBRIDIO_WRITE_THRESHOLD=4M HYBRIDIO_STREAM_THRESHOLD=4M HYBRIDIO_LEARN=off
# Learning off: where the kernel has RWF_DONTCACHE (7.3) the learner may
# prefer the uncached path for these writes (rule learned); the case is the
# size rule's direct route.
run_case shim-hybrid 3 pwrite aligned shim 'gt0 $(jnum rules write_size)' \
	$SHIM HYBRIDIO_POLICY=hybrid HYBRIDIO_WRITE_THRESHOLD=512K HYBRIDIO_LEARN=off
run_case shim-split 4 pwrite split shim 'gt0 $(jnum "" splits)' $SHIM HYBRIDIO_POLICY=direct
run_case shim-bounce 5 pwrite bounce shim 'gt0 $(jnum "" bounces)' $SHIM HYBRIDIO_POLICY=direct

# ---- libhybridio's API: parallel io_uring chunks, write-behind ----
run_case lib-uring 6 hio aligned lib \
	'gt0 $(jnum engine uring_chunks) && is0 $(jnum engine uring_unavailable)' \
	HYBRIDIO_POLICY=direct HYBRIDIO_CHUNK_SIZE=128K
run_case lib-write-behind 7 hio aligned lib 'gt0 $(jnum write_behind writes)' \
	HYBRIDIO_POLICY=direct HYBRIDIO_WRITE_BEHIND=on
else
	echo "SKIP powercut shim-* lib-*: the shim's and the library's cases run on the first kernel"
fi

# ---- hybridfs (plain system calls; the mount routes them) ----
run_case hfs-direct 8 pwrite aligned hfs:direct \
	'gt0 $(hstat write_direct_requests) && is0 $(hstat write_buffered_requests)'
run_case hfs-buffered 9 pwrite aligned hfs:buffered \
	'gt0 $(hstat write_buffered_requests) && is0 $(hstat write_direct_requests)'
run_case hfs-split 10 pwrite split hfs:direct 'gt0 $(hstat splits)'
run_case hfs-bounce 11 pwrite bounce hfs:direct 'gt0 $(hstat fallback_bounce)'
run_case hfs-uring 12 uring aligned hfs:direct 'gt0 $(hstat write_direct_requests)'
run_case hfs-write-behind 13 hio aligned hfs:direct \
	'gt0 $(jnum write_behind writes) && gt0 $(hstat write_direct_requests)' \
	HYBRIDIO_POLICY=direct HYBRIDIO_WRITE_BEHIND=on

# ---- hybridfs's uncached path (IOCB_DONTCACHE), or its fallback where the kernel has none ----
if grep -qw dontcache /sys/fs/hybridfs/features; then
	run_case hfs-dontcache 15 pwrite aligned hfs:dontcache \
		'gt0 $(hstat write_dontcache_requests) && is0 $(hstat write_buffered_requests)'
else
	run_case hfs-dontcache 15 pwrite aligned hfs:dontcache \
		'gt0 $(hstat fallback_dontcache) && is0 $(hstat write_dontcache_requests)'
fi

# ---- the control: buffered writes never synced must be gone ----
run_case control-nofsync 14 pwrite aligned control -

check powercut-rmmod "rmmod hybridfs failed" rmmod hybridfs
