#!/bin/sh
# run-vm-tests.sh - build hybridfs and its test programs, then for each
# supported kernel build the module against that kernel's headers, boot the
# kernel under qemu with ext4 disks and run the same hybridfs tests inside
# (vm-init.sh): functional checks, the integrity test, the power-cut test
# (dm-flakey, dm-log-writes), sysfs, the policy table shared with
# libhybridio, the uncached path and the re-use rule.
#
# Kernels (tools/setup-kernels.sh installs the two besides Debian 12's):
#   6.1   Debian 12's: /usr/src/linux-headers-6.1.*-amd64, /boot/vmlinuz-*
#   6.12  bookworm-backports': /usr/src/linux-headers-6.12.*-amd64
#   7     trixie-backports' newest, in the trixie root $HFS_TRIXIE_ROOT
#         (default /var/lib/hybridio/trixie-root): headers there, the
#         module built there with chroot, kernel and modules in its /kernel
# A kernel whose headers or image are missing is a FAIL (not a skip):
# the suite is the three of them.
#
# Needs (Debian): qemu-system-x86 busybox-static kmod cpio e2fsprogs xz-utils,
# gcc with static libc; for the power-cut test dmsetup, liburing-dev and a
# build of libhybridio.
# Environment:
#   HFS_KERNELS  which kernels, in order (default "6.1 6.12 7")
#   HFS_JOBS     kernels tested at the same time (default: the number of CPUs)
#   HFS_ACCEL    tcg (default) or kvm (falls back to tcg if the VM does not come up)
#   HFS_OPS      integrity test operations (default 10000)
#   HFS_PERF     MiB per throughput file, 0 to skip (default 128 on the first
#                kernel, 0 on the others: it is reported, not asserted)
#   HFS_SMP      guest CPUs (default 1; 2 gives the concurrency test real
#                parallelism at about twice the run time)
#   HFS_KEEP=1   keeps the work directory (console logs included)
#   HFS_BUILD    the CMake build directory holding lib/libhybridio_preload.so
#                and lib/libhybridio.so.0 for the power-cut test (default:
#                build/ of the source tree; missing is a FAIL)
#   HFS_ONLY=powercut runs the power-cut test alone (after boot)
#   HFS_PC_USER=1 runs the power-cut cases of the shim and the library (no
#                kernel code of ours) on every kernel, not only the first
#   HFS_PC_BREAK=nofsync|early breaks durability on purpose (the writers skip
#                fsync, or the power is cut before they run): the power-cut
#                checks must then FAIL (docs/crash.md)
# Prints each kernel's PASS/FAIL lines, then "KERNEL <version>: N passed,
# M failed (S s)", and ends with the total
# "N passed, M failed"; exits non-zero on any failure.
set -u

SRC=$(cd "$(dirname "$0")/.." && pwd)
ROOT=$(cd "$SRC/.." && pwd)
START=$(date +%s)
OPS=${HFS_OPS:-10000}
SMP=${HFS_SMP:-1}
KERNELS=${HFS_KERNELS:-6.1 6.12 7}
TRIXIE_ROOT=${HFS_TRIXIE_ROOT:-/var/lib/hybridio/trixie-root}
TOTAL_PASS=0
TOTAL_FAIL=0
HOST_PASS=0
HOST_FAIL=0

hpass() { echo "PASS $1"; HOST_PASS=$((HOST_PASS + 1)); }
hfail() { echo "FAIL $1: $2"; HOST_FAIL=$((HOST_FAIL + 1)); }
abort() {
	hfail "$1" "$2"
	echo "$((TOTAL_PASS + HOST_PASS)) passed, $((TOTAL_FAIL + HOST_FAIL)) failed"
	exit 1
}

for tool in qemu-system-x86_64 busybox cpio mkfs.ext4 gcc make modinfo xz; do
	command -v $tool >/dev/null 2>&1 || [ -x /bin/$tool ] || [ -x /sbin/$tool ] ||
		abort setup "missing $tool"
done
BUSYBOX=$(command -v busybox || echo /bin/busybox)

WORK=$(mktemp -d /tmp/hybridfs-vm.XXXXXX)
PROC_MOUNTED=""
cleanup() {
	[ -n "$PROC_MOUNTED" ] && umount "$PROC_MOUNTED" 2>/dev/null
	[ -n "${BROOT_BUILD:-}" ] && rm -rf "$BROOT_BUILD"
	if [ "${HFS_KEEP:-0}" = 1 ]; then echo "work dir: $WORK"; else rm -rf "$WORK"; fi
}
trap cleanup EXIT
trap 'exit 130' INT TERM
echo "kernels: $KERNELS, work dir $WORK"

# ---- what every kernel's initramfs shares: busybox, the test programs ----
BASE="$WORK/base"
mkdir -p "$BASE/bin" "$BASE/lib/modules" "$BASE/lib/x86_64-linux-gnu"
if gcc -static -O2 -Wall -Wextra -Werror -o "$BASE/bin/hfs_test" "$SRC/tests/hfs_test.c" \
	2>"$WORK/test-build.log"; then
	hpass test-build
else
	cat "$WORK/test-build.log"
	abort test-build "gcc failed"
fi

# The power-cut test's programs: its writer/checker, the shim, libhybridio
# and dmsetup, each with the shared libraries ldd names.
BUILD=${HFS_BUILD:-$ROOT/build}
POWERCUT=1
no_powercut() { hfail powercut-setup "$1"; POWERCUT=0; }
# copy_with_libs <program or library> <directory in the initramfs>
copy_with_libs() {
	cp -L "$1" "$BASE$2/" &&
	LD_LIBRARY_PATH="$BUILD/lib" ldd "$1" | awk '$2 == "=>" && $3 ~ /^\// { print $3 }
		$1 ~ /^\// && $2 ~ /^\(/ { print $1 }' | while read -r lib; do
		case "$lib" in "$BUILD"/*) continue ;; esac
		mkdir -p "$BASE${lib%/*}" && cp -L "$lib" "$BASE$lib" || exit 1
	done
}
DMSETUP=$(command -v dmsetup || echo /sbin/dmsetup)
if [ ! -r "$BUILD/lib/libhybridio_preload.so" ] || [ ! -r "$BUILD/lib/libhybridio.so.0" ]; then
	no_powercut "no $BUILD/lib/libhybridio_preload.so or libhybridio.so.0 (build the targets hybridio_preload and hybridio, or set HFS_BUILD)"
elif [ ! -x "$DMSETUP" ]; then
	no_powercut "no dmsetup (apt-get install dmsetup)"
elif ! gcc -O2 -Wall -Wextra -Werror -o "$WORK/powercut" "$SRC/tests/powercut.c" \
	-I"$ROOT/libhybridio/include" -L"$BUILD/lib" -lhybridio -luring 2>"$WORK/powercut-build.log"; then
	cat "$WORK/powercut-build.log"
	no_powercut "gcc powercut.c failed"
elif copy_with_libs "$WORK/powercut" /bin && copy_with_libs "$DMSETUP" /bin &&
	copy_with_libs "$BUILD/lib/libhybridio.so.0" /lib/x86_64-linux-gnu &&
	copy_with_libs "$BUILD/lib/libhybridio_preload.so" /lib/x86_64-linux-gnu; then
	hpass powercut-build
else
	no_powercut "copying the programs and their libraries into the initramfs failed"
fi
cp "$BUSYBOX" "$BASE/bin/busybox"
ln -s busybox "$BASE/bin/sh"
cp "$SRC/tests/vm-init.sh" "$BASE/init"
cp "$SRC/tests/powercut.sh" "$BASE/bin/powercut.sh"
chmod 755 "$BASE/init"

# ---- one kernel ----
# find_kernel <series>: sets KV HDR BROOT VMLINUZ MODDIR, or returns 1 and sets WHY.
find_kernel() {
	case $1 in
	7*) BROOT=$TRIXIE_ROOT ;;
	*) BROOT=/ ;;
	esac
	HDR=$(ls -d "${BROOT%/}"/usr/src/linux-headers-"$1".*-amd64 2>/dev/null | sort -V | tail -n 1)
	if [ -z "$HDR" ]; then
		WHY="no linux-headers-$1.*-amd64 under ${BROOT%/}/usr/src (tools/setup-kernels.sh installs them)"
		return 1
	fi
	KV=${HDR##*/linux-headers-}
	if [ "$BROOT" = / ]; then
		VMLINUZ=/boot/vmlinuz-$KV
		MODDIR=/lib/modules/$KV/kernel
	else
		VMLINUZ=$BROOT/kernel/usr/lib/modules/$KV/vmlinuz
		MODDIR=$BROOT/kernel/usr/lib/modules/$KV/kernel
	fi
	[ -r "$VMLINUZ" ] || { WHY="no $VMLINUZ (install the image with the headers)"; return 1; }
	[ -d "$MODDIR" ] || { WHY="no $MODDIR"; return 1; }
	return 0
}

# add_module <name> <order file>: <name> and the modules it depends on, in
# load order, uncompressed into the initramfs.  A module that is not a file
# is built into this kernel (or absent: its users then fail to load or mount).
add_module() {
	[ -e "$IRD/lib/modules/$1.ko" ] && return 0
	f=$(find "$MODDIR" -name "$(echo "$1" | sed 's/[-_]/[-_]/g').ko*" | head -n 1)
	if [ -z "$f" ]; then
		echo "module $1: not a module of $KV (built in)"
		return 0
	fi
	case "$f" in
	*.ko.xz) xz -dc "$f" >"$IRD/lib/modules/$1.ko" ;;
	*.ko.zst) zstd -dcq "$f" >"$IRD/lib/modules/$1.ko" ;;
	*) cp "$f" "$IRD/lib/modules/$1.ko" ;;
	esac || return 1
	for dep in $(modinfo -F depends "$IRD/lib/modules/$1.ko" | tr ',' ' '); do
		add_module "$dep" "$2" || return 1
	done
	echo "$1" >>"$2"
}

# Software emulation by default: nested KVM hangs or aborts on some hosts
# (this one included).
ACCEL=${HFS_ACCEL:-tcg}
if [ "$ACCEL" = kvm ] && ! { [ -r /dev/kvm ] && [ -w /dev/kvm ]; }; then ACCEL=tcg; fi

run_vm() { # <accel> <timeout-seconds>
	if [ "$1" = kvm ]; then cpu=host,-arch-capabilities; else cpu=max; fi
	echo "booting $KV with accel=$1, $SMP cpu (integrity ops $OPS, perf $PERF MiB, power cut $POWERCUT, dontcache $DONTCACHE)"
	BOOT=$(date +%s)
	timeout $2 qemu-system-x86_64 -machine q35,accel=$1 -cpu $cpu -smp $SMP -m 1024 \
		-nographic -no-reboot -nic none -device isa-debug-exit,iobase=0xf4,iosize=0x04 \
		-kernel "$VMLINUZ" -initrd "$KW/initramfs.gz" \
		-append "console=ttyS0 panic=-1 quiet slab_nomerge slub_debug=FZPU,hybridfs_inode,hybridfs_dentry,hybridfs_file hfs_ops=$OPS hfs_perf=$PERF hfs_powercut=$POWERCUT hfs_only=${HFS_ONLY:-all} hfs_pc_break=${HFS_PC_BREAK:-none} hfs_pc_user=$PC_USER hfs_dontcache=$DONTCACHE" \
		-drive file="$KW/disk.img",format=raw,if=virtio,cache=unsafe \
		-drive file="$KW/powercut.img",format=raw,if=virtio,cache=unsafe \
		-drive file="$KW/powercut-log.img",format=raw,if=virtio,cache=unsafe \
		-drive file="$KW/powercut-replay.img",format=raw,if=virtio,cache=unsafe \
		</dev/null >"$KW/console.log" 2>&1
	RC=$?
	tr -d '\r' <"$KW/console.log" >"$KW/console.txt"
}

# The disks: the test's ext4, and the power-cut test's (docs/crash.md),
# sparse: its file system, the dm-log-writes log and the replay target.
make_disks() {
	rm -f "$KW"/*.img
	truncate -s 2G "$KW/disk.img" && mkfs.ext4 -q -F "$KW/disk.img" &&
	truncate -s 64M "$KW/powercut.img" "$KW/powercut-replay.img" &&
	truncate -s 256M "$KW/powercut-log.img" && mkfs.ext4 -q -F "$KW/powercut.img"
}

# run_kernel <series>: build, boot and test one kernel; adds to the totals.
run_kernel() {
	KSTART=$(date +%s)
	KPASS=0
	KFAIL=0
	kpass() { echo "PASS $1"; KPASS=$((KPASS + 1)); }
	kfail() { echo "FAIL $1: $2"; KFAIL=$((KFAIL + 1)); }
	kdone() {
		echo "KERNEL ${KV:-$1}: $KPASS passed, $KFAIL failed ($(( $(date +%s) - KSTART )) s)"
		echo "$KPASS $KFAIL" >"$WORK/result.$1"
	}
	KV=""
	echo "==== kernel $1"
	if ! find_kernel "$1"; then
		kfail "kernel-$1" "$WHY"
		kdone "$1"
		return
	fi
	KW="$WORK/$KV"
	mkdir -p "$KW"

	# The module and the policy table's module, built against this kernel,
	# in the root whose C library its kbuild tools need.
	if [ "$BROOT" = / ]; then
		B="$KW/kmod"
		mkdir -p "$B"
		run_in_root() { "$@"; }
	else
		BROOT_BUILD=$(mktemp -d "$BROOT/tmp/hybridfs-build.XXXXXX")
		B=$BROOT_BUILD
		mount -t proc proc "$BROOT/proc" && PROC_MOUNTED="$BROOT/proc"
		run_in_root() { chroot "$BROOT" env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin "$@"; }
	fi
	mkdir -p "$B/include/hybridio" "$B/cases"
	cp "$SRC"/*.c "$SRC"/*.h "$SRC"/Makefile "$SRC"/compat-probe.sh "$SRC/tests/hfs_policy_test.c" "$B/"
	cp "$ROOT/libhybridio/include/hybridio/policy.h" "$B/include/hybridio/"
	cp "$ROOT/libhybridio/src/policy_cases.h" "$B/cases/"
	BIN=${B#"${BROOT%/}"}
	if run_in_root make -j2 -C "${HDR#"${BROOT%/}"}" M="$BIN" HYBRIDIO_INCLUDE="$BIN/include" \
		HFS_POLICY_CASES="$BIN/cases" W=1 modules >"$KW/build.log" 2>&1; then
		kpass module-build
	else
		cat "$KW/build.log"
		kfail module-build "make failed"
	fi
	if [ -n "$PROC_MOUNTED" ]; then umount "$PROC_MOUNTED"; PROC_MOUNTED=""; fi
	WARN=$(grep -i 'warning:' "$KW/build.log")
	if [ -z "$WARN" ]; then kpass module-build-no-warnings; else
		echo "$WARN"; kfail module-build-no-warnings "compiler warnings (W=1)"; fi
	# What this kernel has, as compat.h's feature tests found it (the
	# headers' own tree is where the -amd64 Makefile includes from).
	COMMON=${BROOT%/}$(sed -n 's|^include \(.*\)/Makefile$|\1|p' "$HDR/Makefile" | head -n 1)
	echo "compat:$(sh "$SRC/compat-probe.sh" "$COMMON")"
	DONTCACHE=0
	grep -qs '#define IOCB_DONTCACHE' "$COMMON/include/linux/fs.h" &&
		grep -qs '#define FOP_DONTCACHE' "$COMMON/include/linux/fs.h" && DONTCACHE=1
	if [ ! -r "$B/hybridfs.ko" ] || [ ! -r "$B/hfs_policy_test.ko" ]; then
		[ -n "${BROOT_BUILD:-}" ] && rm -rf "$BROOT_BUILD" && BROOT_BUILD=""
		kdone "$1"
		return
	fi

	# The initramfs: the shared part, this kernel's modules and ours.
	IRD="$KW/initramfs"
	cp -a "$BASE" "$IRD"
	ok=1
	for m in virtio_pci virtio_blk crc32c_generic ext4; do
		add_module $m "$IRD/lib/modules/boot.order" || ok=0
	done
	: >"$IRD/lib/modules/dm.order"
	for m in dm-mod dm-flakey dm-log-writes; do
		add_module $m "$IRD/lib/modules/dm.order" || ok=0
	done
	[ $ok = 1 ] || kfail initramfs "copying the modules of $KV failed"
	cp "$B/hybridfs.ko" "$B/hfs_policy_test.ko" "$IRD/lib/modules/"
	[ -n "${BROOT_BUILD:-}" ] && rm -rf "$BROOT_BUILD" && BROOT_BUILD=""
	(cd "$IRD" && find . | cpio -o -H newc --quiet | gzip -1) >"$KW/initramfs.gz"
	make_disks || { kfail setup "making the disks failed"; kdone "$1"; return; }

	if [ "$ACCEL" = kvm ]; then run_vm kvm 120; else run_vm tcg 900; fi
	if [ "$ACCEL" = kvm ] && ! grep -q '^PASS module-load' "$KW/console.txt"; then
		tail -n 3 "$KW/console.txt"
		echo "kvm did not work here: falling back to tcg"
		make_disks
		run_vm tcg 900
	fi
	grep -E '^(PASS|FAIL|SKIP|PERF|integrity:|stress:|powercut:|slab|dmesg|write_|read_)' "$KW/console.txt"
	echo "vm: qemu exit $RC after $(( $(date +%s) - BOOT )) s"
	KPASS=$((KPASS + $(grep -c '^PASS ' "$KW/console.txt")))
	KFAIL=$((KFAIL + $(grep -c '^FAIL ' "$KW/console.txt")))
	if ! grep -q '^VM-DONE' "$KW/console.txt"; then
		echo "---- console tail ----"
		tail -n 40 "$KW/console.txt"
		kfail vm-complete "the VM did not finish (qemu exit $RC)"
	fi
	kdone "$1"
}

# The kernels run $HFS_JOBS at a time (default: one per CPU); each one's
# output is printed whole when its batch is done.
JOBS=${HFS_JOBS:-$(nproc 2>/dev/null || echo 1)}
PERF_FIRST=${HFS_PERF:-128}
PERF_REST=${HFS_PERF:-0}
PERF=$PERF_FIRST
# The power-cut cases of the shim and the library on ext4 (no code of ours
# in the kernel) run on the first kernel only; HFS_PC_USER=1 runs them on all.
PC_USER=1
batch=""
n=0
flush() {
	wait
	for k in $batch; do
		cat "$WORK/out.$k"
		if [ -r "$WORK/result.$k" ]; then
			read -r p f <"$WORK/result.$k"
		else
			p=0
			f=1
			echo "FAIL kernel-$k: its run ended without a result"
		fi
		TOTAL_PASS=$((TOTAL_PASS + p))
		TOTAL_FAIL=$((TOTAL_FAIL + f))
	done
	batch=""
	n=0
}
for k in $KERNELS; do
	(
		run_kernel "$k"
		rm -rf "$WORK/${KV:-none}/initramfs" "$WORK/${KV:-none}"/*.img
	) >"$WORK/out.$k" 2>&1 &
	PERF=$PERF_REST
	PC_USER=${HFS_PC_USER:-0}
	batch="$batch $k"
	n=$((n + 1))
	[ $n -lt "$JOBS" ] || flush
done
flush

PASSED=$((TOTAL_PASS + HOST_PASS))
FAILED=$((TOTAL_FAIL + HOST_FAIL))
echo "total time $(( $(date +%s) - START )) s"
echo "$PASSED passed, $FAILED failed"
[ "$FAILED" -eq 0 ]
