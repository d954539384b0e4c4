#!/bin/sh
# powercut.sh - the power-cut test inside the test VM (run by vm-init.sh;
# docs/crash.md).  Writes files through the LD_PRELOAD shim, libhybridio's
# API and hybridfs onto an ext4 on two stacked device-mapper devices over
# /dev/vdb: "pc" (linear, switched to dm-flakey to cut) over "pclog"
# (dm-log-writes, logging every write to /dev/vdc).  After the writers'
# fsyncs the power is cut twice over:
#  1. pc is switched to dm-flakey drop_writes (every write from then on is
#     acknowledged and thrown away), the file systems are unmounted, the
#     plain table is put back, the ext4 is remounted (journal replayed) and
#     every file is checked with `powercut check`;
#  2. the log is replayed onto /dev/vdd (a copy of the fresh file system) up
#     to the last flush before the cut (`powercut replay`: a device with a
#     volatile write cache loses what was never flushed), mounted and
#     checked the same way.
# Prints PASS/FAIL lines.
#
# Argument: break=nofsync (the writers skip every fsync) or break=early (the
# power is cut before the writers run): both must make the checks FAIL; they
# exist to show by hand that the test would notice broken durability.

PC=/bin/powercut
DEV=/dev/vdb
LOGDEV=/dev/vdc
REPLAYDEV=/dev/vdd
MNT=/pc
HMNT=/mnt/pc
RMNT=/pc-replay
BREAK=${1#break=}
PRELOAD=/lib/x86_64-linux-gnu/libhybridio_preload.so

pass() { echo "PASS $1"; }
fail() { echo "FAIL $1: $2"; }
check() {
	name=$1; why=$2; shift 2
	if "$@"; then pass "$name"; else fail "$name" "$why"; fi
}

# One number from a libhybridio stats file (HYBRIDIO_STATS): the first
# "<key>": N on the line that starts with "<line>" (top-level for "").
jnum() { # <file> <line-key or ""> <key>
	if [ -n "$2" ]; then grep "^  \"$2\":" "$1"; else cat "$1"; fi |
		grep -o "\"$3\": {*\"*[a-z]*\"*:* *[0-9]*" | head -n 1 | grep -o '[0-9]*$'
}
# Bytes written on <path> (buffered, direct) in a stats file.
wbytes() { # <file> <path>
	grep '^  "write":' "$1" | sed "s/.*\"$2\": {\"requests\": [0-9]*, \"bytes\": \([0-9]*\)}.*/\1/"
}
hstat() { awk -v k="$1" '$1 == k { print $2 }' "$HSTATS"; }

# The cut: a mark in the log (where cut 2 cuts), then drop_writes (cut 1).
# --nolockfs: a suspend would otherwise freeze the ext4, which writes back
# everything and so makes unsynced data durable.
cut_power() {
	dmsetup message pclog 0 mark powercut &&
	dmsetup suspend --nolockfs pc && dmsetup load pc --table "$DROP" && dmsetup resume pc
}

mkdir -p $MNT $HMNT $RMNT
for m in dm-mod dm-flakey dm-log-writes; do
	insmod /lib/modules/$m.ko || { fail powercut-setup "insmod $m"; exit 0; }
done
export DM_DISABLE_UDEV=1
SECTORS=$(cat /sys/block/${DEV#/dev/}/size 2>/dev/null)
if [ -z "$SECTORS" ] || [ "$SECTORS" = 0 ] || [ ! -b $LOGDEV ] || [ ! -b $REPLAYDEV ]; then
	fail powercut-setup "no $DEV, $LOGDEV or $REPLAYDEV (the test's disks)"
	exit 0
fi
UP="0 $SECTORS linear /dev/mapper/pclog 0"
DROP="0 $SECTORS flakey /dev/mapper/pclog 0 0 3600 1 drop_writes"
if ! { dmsetup create pclog --table "0 $SECTORS log-writes $DEV $LOGDEV" &&
       dmsetup create pc --table "$UP"; } >/tmp/dmsetup.log 2>&1; then
	fail powercut-setup "dmsetup create: $(cat /tmp/dmsetup.log)"
	exit 0
fi
DM=/dev/mapper/pc
# commit=300: no periodic journal commit makes anything durable by chance;
# only fsync (and the umount that the cut turns into nothing) would.
if ! mount -t ext4 -o commit=300 $DM $MNT; then
	fail powercut-setup "cannot mount the ext4 on $DM"
	exit 0
fi
mkdir -p $MNT/shim $MNT/lib $MNT/hfs $MNT/control
sync
# No periodic writeback either: dirty pages stay in memory until an fsync.
echo 0 >/proc/sys/vm/dirty_writeback_centisecs
insmod /lib/modules/hybridfs.ko
if ! mount -t hybridfs -o policy=direct $MNT/hfs $HMNT; then
	fail powercut-setup "cannot mount hybridfs over $MNT/hfs"
	exit 0
fi
HSYS=/sys/fs/hybridfs/$(/bin/hfs_test devid $HMNT)
HSTATS=$HSYS/stats
[ "$BREAK" = early ] && cut_power

# write <case> <dir> <file-id> <method> <shape> [VAR=value...]: the writer,
# its failure a FAIL line; CASES collects what the checks need (the file is
# checked in $CHECK_DIR if set, else where it was written).
CASES=""
NOFSYNC=""
[ "$BREAK" = nofsync ] && NOFSYNC=nofsync
write() {
	c=$1; d=$2; id=$3; method=$4; shape=$5; shift 5
	rm -f /tmp/pc-$c.json
	if env HYBRIDIO_STATS=/tmp/pc-$c.json "$@" $PC write $d/$c $id $method $shape $NOFSYNC \
		>/tmp/pc-$c.log 2>&1; then
		CASES="$CASES $c:${CHECK_DIR:-$d}:$id:$shape"
	else
		fail powercut-$c-write "$(tr '\n' ' ' </tmp/pc-$c.log)"
	fi
}
S=/tmp/pc-
SHIM="LD_PRELOAD=$PRELOAD"

# ---- the shim (LD_PRELOAD, plain pwrite/fsync) on the ext4 ----
write shim-direct $MNT/shim 1 pwrite aligned $SHIM HYBRIDIO_POLICY=direct
check powercut-shim-direct-path "not all direct: $(grep '"write"' ${S}shim-direct.json)" sh -c \
	"test \"$(wbytes ${S}shim-direct.json direct)\" -gt 0 && test \"$(wbytes ${S}shim-direct.json buffered)\" = 0"
# Under HYBRIDIO_POLICY=buffered the shim looks at no request (plain libc):
# the shim's buffered path is hybrid below its thresholds (rule "small").
write shim-buffered $MNT/shim 2 pwrite aligned $SHIM HYBRIDIO_POLICY=hybrid \
	HYBRIDIO_WRITE_THRESHOLD=4M HYBRIDIO_STREAM_THRESHOLD=4M
check powercut-shim-buffered-path "not all buffered: $(grep '"write"' ${S}shim-buffered.json)" sh -c \
	"test \"$(wbytes ${S}shim-buffered.json buffered)\" -gt 0 && test \"$(wbytes ${S}shim-buffered.json direct)\" = 0 &&
	 test \"$(jnum ${S}shim-buffered.json rules small)\" -gt 0"
write shim-hybrid $MNT/shim 3 pwrite aligned $SHIM HYBRIDIO_POLICY=hybrid HYBRIDIO_WRITE_THRESHOLD=512K
check powercut-shim-hybrid-path "no write_size rule: $(grep '"rules"' ${S}shim-hybrid.json)" sh -c \
	"test \"$(jnum ${S}shim-hybrid.json rules write_size)\" -gt 0"
write shim-split $MNT/shim 4 pwrite split $SHIM HYBRIDIO_POLICY=direct
check powercut-shim-split-path "no splits" sh -c "test \"$(jnum ${S}shim-split.json '' splits)\" -gt 0"
write shim-bounce $MNT/shim 5 pwrite bounce $SHIM HYBRIDIO_POLICY=direct
check powercut-shim-bounce-path "no bounces" sh -c "test \"$(jnum ${S}shim-bounce.json '' bounces)\" -gt 0"

# ---- libhybridio's API: parallel io_uring chunks, write-behind ----
write lib-uring $MNT/lib 6 hio aligned HYBRIDIO_POLICY=direct HYBRIDIO_CHUNK_SIZE=128K
check powercut-lib-uring-path "no chunks in flight together: $(grep '"engine"' ${S}lib-uring.json)" sh -c \
	"test \"$(jnum ${S}lib-uring.json engine uring_chunks)\" -gt 0 && test \"$(jnum ${S}lib-uring.json engine uring_unavailable)\" = 0"
write lib-write-behind $MNT/lib 7 hio aligned HYBRIDIO_POLICY=direct HYBRIDIO_WRITE_BEHIND=on
check powercut-lib-write-behind-path "no write-behind writes" sh -c \
	"test \"$(jnum ${S}lib-write-behind.json write_behind writes)\" -gt 0"

# ---- hybridfs (plain system calls; the mount routes them) ----
# hwrite <case> <id> <method> <shape> [VAR=value...]: write through the
# mount with its counters zeroed first; checked on the lower ext4.
hwrite() {
	c=$1; id=$2; method=$3; shape=$4; shift 4
	echo 1 >$HSYS/reset_stats
	CHECK_DIR=$MNT/hfs
	write $c $HMNT $id $method $shape "$@"
	CHECK_DIR=""
}
hwrite hfs-direct 8 pwrite aligned
check powercut-hfs-direct-path "direct $(hstat write_direct_requests), splits $(hstat splits)" sh -c \
	"test $(hstat write_direct_requests) -gt 0 && test $(hstat write_buffered_requests) = 0"
echo buffered >$HSYS/policy
hwrite hfs-buffered 9 pwrite aligned
check powercut-hfs-buffered-path "direct $(hstat write_direct_requests)" sh -c \
	"test $(hstat write_buffered_requests) -gt 0 && test $(hstat write_direct_requests) = 0"
echo direct >$HSYS/policy
hwrite hfs-split 10 pwrite split
check powercut-hfs-split-path "splits $(hstat splits)" test "$(hstat splits)" -gt 0
hwrite hfs-bounce 11 pwrite bounce
check powercut-hfs-bounce-path "fallback_bounce $(hstat fallback_bounce)" test "$(hstat fallback_bounce)" -gt 0
hwrite hfs-uring 12 uring aligned
check powercut-hfs-uring-path "direct $(hstat write_direct_requests)" test "$(hstat write_direct_requests)" -gt 0
hwrite hfs-write-behind 13 hio aligned HYBRIDIO_POLICY=direct HYBRIDIO_WRITE_BEHIND=on
check powercut-hfs-write-behind-path "no write-behind writes or no direct writes below" sh -c \
	"test \"$(jnum ${S}hfs-write-behind.json write_behind writes)\" -gt 0 && test $(hstat write_direct_requests) -gt 0"

# ---- the control: buffered writes never synced must be gone ----
# The file exists durably (created and synced before), so the check sees
# lost data rather than a missing file.
touch $MNT/control/control-nofsync
sync
NOFSYNC=nofsync
write control-nofsync $MNT/control 14 pwrite aligned
: >/tmp/pc-expect-loss-control-nofsync

# check_all <prefix> <mount>: every case written, checked under <mount>.
check_all() {
	prefix=$1; under=$2
	for c in $CASES; do
		set -- $(echo $c | tr ':' ' ')
		file=$under${2#$MNT}/$1
		if [ -e /tmp/pc-expect-loss-$1 ]; then
			$PC check $prefix-$1 $file $3 $4 expect-loss
		else
			$PC check $prefix-$1 $file $3 $4
		fi
	done
}

# ---- cut 1: drop_writes, remount ----
[ "$BREAK" = early ] || cut_power || fail powercut-cut "dmsetup could not mark the log or switch to drop_writes"
umount $HMNT || fail powercut-cut "umount hybridfs"
umount $MNT || fail powercut-cut "umount ext4"
dmsetup suspend pc && dmsetup load pc --table "$UP" && dmsetup resume pc ||
	fail powercut-cut "dmsetup could not restore the table"
RECOVERED=$(dmesg | grep -c 'recovery complete')
if ! mount -t ext4 $DM $MNT; then
	fail powercut-remount "cannot mount the ext4 after the cut"
else
	check powercut-journal-replayed "the remount found a clean file system: nothing was cut" \
		test "$(dmesg | grep -c 'recovery complete')" -gt "$RECOVERED"
	check_all powercut $MNT
	umount $MNT
fi

# ---- cut 2: the log up to the last flush before the mark ----
dmsetup remove pc && dmsetup remove pclog || fail powercut-cleanup "dmsetup remove"
if $PC replay $LOGDEV $REPLAYDEV powercut; then
	RECOVERED=$(dmesg | grep -c 'recovery complete')
	if ! mount -t ext4 $REPLAYDEV $RMNT; then
		fail powercut-replay-remount "cannot mount the replayed ext4"
	else
		check powercut-replay-journal-replayed "the replayed file system was clean: nothing was cut" \
			test "$(dmesg | grep -c 'recovery complete')" -gt "$RECOVERED"
		check_all powercut-replay $RMNT
		umount $RMNT
	fi
fi
check powercut-rmmod "rmmod hybridfs failed" rmmod hybridfs
