#!/bin/sh
# run-vm-tests.sh - build hybridfs and its test program, boot Debian's 6.1
# kernel under qemu with an ext4 disk, and run the hybridfs tests inside.
#
# Needs (Debian): linux-image-amd64 linux-headers-amd64 (same ABI number),
# qemu-system-x86 busybox-static kmod cpio e2fsprogs, gcc with static libc;
# for the power-cut test dmsetup, liburing-dev and a build of libhybridio.
# Environment:
#   KDIR       kernel headers to build against (default: the newest 6.1 ones)
#   HFS_ACCEL  tcg (default) or kvm (falls back to tcg if the VM does not come up)
#   HFS_OPS    integrity test operations (default 10000)
#   HFS_PERF   MiB per throughput file, 0 to skip (default 128)
#   HFS_SMP    guest CPUs (default 1; 2 gives the concurrency test real
#              parallelism at about twice the run time)
#   HFS_KEEP=1 keeps the work directory (console log included)
#   HFS_BUILD  the CMake build directory holding lib/libhybridio_preload.so
#              and lib/libhybridio.so.0 for the power-cut test (default:
#              build/ of the source tree; missing is a FAIL)
#   HFS_ONLY=powercut runs the power-cut test alone (after boot)
#   HFS_PC_BREAK=nofsync|early breaks durability on purpose (the writers skip
#              fsync, or the power is cut before they run): the power-cut
#              checks must then FAIL (docs/crash.md)
# Prints PASS/FAIL lines and ends with "N passed, M failed"; exits non-zero
# on any failure.
set -u

SRC=$(cd "$(dirname "$0")/.." && pwd)
ROOT=$(cd "$SRC/.." && pwd)
START=$(date +%s)
OPS=${HFS_OPS:-10000}
PERF=${HFS_PERF:-128}
SMP=${HFS_SMP:-1}
HOST_PASS=0
HOST_FAIL=0

hpass() { echo "PASS $1"; HOST_PASS=$((HOST_PASS + 1)); }
hfail() { echo "FAIL $1: $2"; HOST_FAIL=$((HOST_FAIL + 1)); }
abort() {
	hfail "$1" "$2"
	echo "$HOST_PASS passed, $HOST_FAIL failed"
	exit 1
}

HDR=$(ls -d /usr/src/linux-headers-6.1.*-amd64 2>/dev/null | sort -V | tail -n 1)
[ -n "$HDR" ] || abort setup "no /usr/src/linux-headers-6.1.*-amd64 (apt-get install linux-headers-amd64)"
KV=${HDR##*/linux-headers-}
KDIR=${KDIR:-$HDR}
VMLINUZ=/boot/vmlinuz-$KV
MODDIR=/lib/modules/$KV/kernel
[ -r "$VMLINUZ" ] || abort setup "no $VMLINUZ (install linux-image-amd64 with the headers)"
for tool in qemu-system-x86_64 busybox cpio mkfs.ext4 gcc make; do
	command -v $tool >/dev/null 2>&1 || [ -x /bin/$tool ] || abort setup "missing $tool"
done
BUSYBOX=$(command -v busybox || echo /bin/busybox)

WORK=$(mktemp -d /tmp/hybridfs-vm.XXXXXX)
cleanup() { [ "${HFS_KEEP:-0}" = 1 ] && echo "work dir: $WORK" || rm -rf "$WORK"; }
trap cleanup EXIT INT TERM
echo "kernel $KV, work dir $WORK"

# ---- build the module out of the source tree ----
mkdir -p "$WORK/kmod"
cp "$SRC"/*.c "$SRC"/*.h "$SRC"/Makefile "$WORK/kmod/"
if make -j2 -C "$KDIR" M="$WORK/kmod" HYBRIDIO_INCLUDE="$ROOT/libhybridio/include" W=1 \
	modules >"$WORK/build.log" 2>&1; then
	hpass module-build
else
	cat "$WORK/build.log"
	abort module-build "make failed"
fi
WARN=$(grep -i 'warning:' "$WORK/build.log")
if [ -z "$WARN" ]; then hpass module-build-no-warnings; else
	echo "$WARN"; hfail module-build-no-warnings "compiler warnings (W=1)"; fi

# ---- build the static test program ----
if gcc -static -O2 -Wall -Wextra -Werror -o "$WORK/hfs_test" "$SRC/tests/hfs_test.c" \
	2>"$WORK/test-build.log"; then
	hpass test-build
else
	cat "$WORK/test-build.log"
	abort test-build "gcc failed"
fi

# ---- the power-cut test's programs: its writer/checker, the shim,
# libhybridio and dmsetup, each with the shared libraries ldd names ----
IRD="$WORK/initramfs"
mkdir -p "$IRD/bin" "$IRD/lib/modules" "$IRD/lib/x86_64-linux-gnu"
BUILD=${HFS_BUILD:-$ROOT/build}
POWERCUT=1
no_powercut() { hfail powercut-setup "$1"; POWERCUT=0; }
# copy_with_libs <program or library> <directory in the initramfs>
copy_with_libs() {
	cp -L "$1" "$IRD$2/" &&
	LD_LIBRARY_PATH="$BUILD/lib" ldd "$1" | awk '$2 == "=>" && $3 ~ /^\// { print $3 }
		$1 ~ /^\// && $2 ~ /^\(/ { print $1 }' | while read -r lib; do
		case "$lib" in "$BUILD"/*) continue ;; esac
		mkdir -p "$IRD${lib%/*}" && cp -L "$lib" "$IRD$lib" || exit 1
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

# ---- initramfs: busybox, the test programs, the modules, /init ----
cp "$BUSYBOX" "$IRD/bin/busybox"
ln -s busybox "$IRD/bin/sh"
cp "$WORK/hfs_test" "$IRD/bin/hfs_test"
cp "$SRC/tests/vm-init.sh" "$IRD/init"
cp "$SRC/tests/powercut.sh" "$IRD/bin/powercut.sh"
chmod 755 "$IRD/init"
for m in virtio_ring virtio virtio_pci_legacy_dev virtio_pci_modern_dev virtio_pci \
	 virtio_blk crc16 crc32c_generic mbcache jbd2 ext4 dm-mod dm-flakey dm-log-writes; do
	f=$(find "$MODDIR" -name "$m.ko*" | head -n 1)
	[ -n "$f" ] || abort setup "module $m not found under $MODDIR"
	case "$f" in
	*.ko.xz) xz -dc "$f" >"$IRD/lib/modules/$m.ko" ;;
	*.ko.zst) zstd -dcq "$f" >"$IRD/lib/modules/$m.ko" ;;
	*) cp "$f" "$IRD/lib/modules/$m.ko" ;;
	esac
done
cp "$WORK/kmod/hybridfs.ko" "$IRD/lib/modules/"
(cd "$IRD" && find . | cpio -o -H newc --quiet | gzip -1) >"$WORK/initramfs.gz"

# ---- disk ----
truncate -s 2G "$WORK/disk.img"
mkfs.ext4 -q -F "$WORK/disk.img" || abort setup "mkfs.ext4 failed"
# The power-cut test's disks (docs/crash.md), sparse: the file system
# (/dev/vdb), the dm-log-writes log (/dev/vdc) and the replay target
# (/dev/vdd, where each case copies the file system before it writes).
powercut_disks() {
	rm -f "$WORK/powercut.img" "$WORK/powercut-log.img" "$WORK/powercut-replay.img"
	truncate -s 64M "$WORK/powercut.img" "$WORK/powercut-replay.img" &&
	truncate -s 256M "$WORK/powercut-log.img" && mkfs.ext4 -q -F "$WORK/powercut.img"
}
powercut_disks || abort setup "making the power-cut disks failed"

# ---- boot ----
run_vm() { # <accel> <timeout-seconds>
	if [ "$1" = kvm ]; then cpu=host,-arch-capabilities; else cpu=max; fi
	echo "booting with accel=$1, $SMP cpu (integrity ops $OPS, perf $PERF MiB, power cut $POWERCUT)"
	BOOT=$(date +%s)
	timeout $2 qemu-system-x86_64 -machine q35,accel=$1 -cpu $cpu -smp $SMP -m 1024 \
		-nographic -no-reboot -nic none -device isa-debug-exit,iobase=0xf4,iosize=0x04 \
		-kernel "$VMLINUZ" -initrd "$WORK/initramfs.gz" \
		-append "console=ttyS0 panic=-1 quiet slab_nomerge slub_debug=FZPU,hybridfs_inode,hybridfs_dentry,hybridfs_file hfs_ops=$OPS hfs_perf=$PERF hfs_powercut=$POWERCUT hfs_only=${HFS_ONLY:-all} hfs_pc_break=${HFS_PC_BREAK:-none}" \
		-drive file="$WORK/disk.img",format=raw,if=virtio,cache=unsafe \
		-drive file="$WORK/powercut.img",format=raw,if=virtio,cache=unsafe \
		-drive file="$WORK/powercut-log.img",format=raw,if=virtio,cache=unsafe \
		-drive file="$WORK/powercut-replay.img",format=raw,if=virtio,cache=unsafe \
		</dev/null >"$WORK/console.log" 2>&1
	RC=$?
	tr -d '\r' <"$WORK/console.log" >"$WORK/console.txt"
}
# Software emulation by default: nested KVM hangs or aborts on some hosts
# (this one included), and the whole run takes well under a minute in tcg.
ACCEL=${HFS_ACCEL:-tcg}
if [ "$ACCEL" = kvm ] && ! { [ -r /dev/kvm ] && [ -w /dev/kvm ]; }; then ACCEL=tcg; fi
if [ "$ACCEL" = kvm ]; then run_vm kvm 120; else run_vm tcg 600; fi
if [ "$ACCEL" = kvm ] && ! grep -q '^PASS module-load' "$WORK/console.txt"; then
	tail -n 3 "$WORK/console.txt"
	echo "kvm did not work here: falling back to tcg"
	mkfs.ext4 -q -F "$WORK/disk.img"
	powercut_disks
	run_vm tcg 600
fi
grep -E '^(PASS|FAIL|PERF|integrity:|stress:|powercut:|slab|dmesg|write_|read_)' "$WORK/console.txt"
echo "vm: qemu exit $RC after $(( $(date +%s) - BOOT )) s"

VM_PASS=$(grep -c '^PASS ' "$WORK/console.txt")
VM_FAIL=$(grep -c '^FAIL ' "$WORK/console.txt")
if ! grep -q '^VM-DONE' "$WORK/console.txt"; then
	echo "---- console tail ----"
	tail -n 40 "$WORK/console.txt"
	hfail vm-complete "the VM did not finish (qemu exit $RC)"
fi
PASSED=$((HOST_PASS + VM_PASS))
FAILED=$((HOST_FAIL + VM_FAIL))
echo "total time $(( $(date +%s) - START )) s"
echo "$PASSED passed, $FAILED failed"
[ "$FAILED" -eq 0 ]
