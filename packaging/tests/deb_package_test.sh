#!/usr/bin/env bash
# The Debian packages on this machine: builds them (tools/build-debs.sh),
# installs them with dpkg -i, checks what a user gets from /usr (`hybridio
# run -- dd` with the installed shim, the man pages, a consumer compiled with
# pkg-config and with find_package, the module DKMS built for each kernel
# hybridfs is tested on: 6.1 and 6.12 on this machine, 7.x in the trixie root
# of tools/setup-kernels.sh, where the package is installed too), then purges
# them, leaving the machine as it found it.
# Usage: deb_package_test.sh SOURCE_DIR PACKAGE_BUILD_DIR   (as root)
# Exit 77 (skipped) when not root: dpkg -i needs it.
set -u
src=$(cd "$1" && pwd)
pkgbuild=$2
packages=(libhybridio0 libhybridio-dev hybridio hybridfs-dkms)
export DEBIAN_FRONTEND=noninteractive   # DKMS's helper talks to debconf
libdir=/usr/lib/$(dpkg-architecture -qDEB_HOST_MULTIARCH 2>/dev/null || echo x86_64-linux-gnu)

if [ "$(id -u)" -ne 0 ]; then
  echo "skip: installing packages with dpkg -i needs root"
  exit 77
fi
command -v dkms >/dev/null || { echo "not ok - dkms is not installed (tools/setup-debian.sh installs it)"; exit 1; }
# The kernels on this machine DKMS must build for: the newest 6.1 and 6.12.
kvs=()
for series in 6.1 6.12; do
  headers=$(ls -d /usr/src/linux-headers-$series.*-amd64 2>/dev/null | sort -V | tail -n 1)
  [ -n "$headers" ] || { echo "not ok - no $series kernel headers (tools/setup-debian.sh, tools/setup-kernels.sh)"; exit 1; }
  kv=${headers##*/linux-headers-}
  [ -d "/lib/modules/$kv" ] || { echo "not ok - /lib/modules/$kv is missing (the image of $kv)"; exit 1; }
  kvs+=("$kv")
done
# The newest kernel, in the trixie root (its kbuild tools need trixie's C library).
troot=${HFS_TRIXIE_ROOT:-/var/lib/hybridio/trixie-root}
theaders=$(ls -d "$troot"/usr/src/linux-headers-7.*-amd64 2>/dev/null | sort -V | tail -n 1)
[ -n "$theaders" ] && [ -x "$troot/usr/sbin/dkms" ] ||
  { echo "not ok - no 7.x headers and dkms in $troot (tools/setup-kernels.sh)"; exit 1; }
tkv=${theaders##*/linux-headers-}
# Commands in the root, with /proc mounted (the kernel's objtool reads it).
in_troot() {
  local rc
  mount -t proc proc "$troot/proc" || return 1
  chroot "$troot" env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin DEBIAN_FRONTEND=noninteractive "$@"
  rc=$?
  umount "$troot/proc"
  return $rc
}

installed() { dpkg-query -W -f='${Status}\n' "$1" 2>/dev/null | grep -q ' installed$'; }
present() { dpkg-query -W -f='${Status}\n' "$1" 2>/dev/null | grep -qv '^unknown ok not-installed$'; }
purge_ours() {
  local p left=()
  for p in "${packages[@]}"; do present "$p" && left+=("$p"); done
  [ ${#left[@]} -eq 0 ] || dpkg --purge "${left[@]}"
}
for p in "${packages[@]}"; do
  if present "$p"; then
    echo "note: $p is on this machine already (an earlier run stopped half-way?); purging it first"
    purge_ours >/dev/null || { echo "not ok - cannot purge the packages an earlier run left"; exit 1; }
    break
  fi
done
# DKMS leaves its updates/dkms directories and, after its first build, its
# module signing key behind: what is new is removed again at the end.
new_leftovers=()
for f in "${kvs[@]/#//lib/modules/}" /var/lib/dkms/mok.key /var/lib/dkms/mok.pub; do
  case $f in /lib/modules/*) f=$f/updates ;; esac
  [ -e "$f" ] || new_leftovers+=("$f")
done
for f in "/usr/lib/modules/$tkv/updates" /var/lib/dkms/mok.key /var/lib/dkms/mok.pub; do
  [ -e "$troot$f" ] || new_leftovers+=("$troot$f")
done

echo "building the packages in $pkgbuild"
start=$(date +%s)
"$src/tools/build-debs.sh" "$pkgbuild" >"$pkgbuild.log" 2>&1 || {
  tail -30 "$pkgbuild.log"; echo "not ok - tools/build-debs.sh failed"; exit 1; }
echo "built in $(( $(date +%s) - start )) s"

BUILD=$pkgbuild
. "$src/tests/preload/lib.sh"   # check/ok/not_ok/finish and $WORK on the build tree's filesystem
cleanup() {
  purge_ours >/dev/null 2>&1
  in_troot dpkg --purge hybridfs-dkms >/dev/null 2>&1
  rm -f "$troot"/tmp/hybridfs-dkms_*.deb
  local f
  for f in "${new_leftovers[@]}"; do
    case $f in
      */updates) rmdir "$f/dkms" "$f" 2>/dev/null ;;
      *) rm -f "$f" ;;
    esac
  done
  rm -rf "$WORK"
}
trap cleanup EXIT

debs=()
for p in "${packages[@]}"; do debs+=("$(ls "$pkgbuild"/debs/"${p}"_*.deb)"); done
start=$(date +%s)
check "dpkg -i installs the four packages (DKMS builds the module)" dpkg -i "${debs[@]}"
grep -i -e "building for" -e "error" "$WORK/last.log" | sed 's/^/    /'
echo "    installed in $(( $(date +%s) - start )) s"
for p in "${packages[@]}"; do check "$p is installed" installed "$p"; done

# Every file the project installs is in one of the packages: an install rule
# without a package's component would be lost.
check "every installed file is in a package" bash -c "
  DESTDIR='$WORK/all' cmake --install '$pkgbuild' >/dev/null &&
  (cd '$WORK/all' && find . ! -type d | sed 's|^\.||' | sort) >'$WORK/all.list' &&
  dpkg -L ${packages[*]} | sort -u >'$WORK/pkg.list' &&
  comm -23 '$WORK/all.list' '$WORK/pkg.list' | tee '$WORK/missing' && [ ! -s '$WORK/missing' ]"

# The command from /usr/bin finds the installed shim (no build tree around).
run() { env -u LD_PRELOAD -u LD_LIBRARY_PATH -u HYBRIDIO_PRELOAD_LIB "$@"; }
check "hybridio run preloads the installed shim" bash -c "
  [ \"\$(cd / && env -u LD_PRELOAD -u HYBRIDIO_PRELOAD_LIB /usr/bin/hybridio run --quiet -- sh -c 'echo \$LD_PRELOAD')\" = \
    '$libdir/libhybridio_preload.so' ]"
check "/usr/bin/hybridio run -- dd writes through the shim" run /usr/bin/hybridio run --quiet --stats "$WORK/run.json" -- \
  dd if=/dev/zero of="$WORK/dd.bin" bs=4M count=16 conv=fsync status=none
check "the dd run went direct, all 64 MiB" "$PY" -c "
import json; s = json.load(open('$WORK/run.json'))
assert s['processes'] >= 1 and s['write']['direct']['bytes'] == 64 << 20, s"
check "the file dd wrote holds its 64 MiB of zeros" cmp -n $((64 << 20)) "$WORK/dd.bin" /dev/zero
check "hybridio is linked against the system's libraries only" bash -c "
  ldd /usr/bin/hybridio | tee /dev/stderr | grep -q liburing && ! ldd /usr/bin/hybridio | grep -q -e 'not found' -e '$pkgbuild'"

# Man pages: each one the packages ship is found by man, in the package its
# section belongs to (1 and 5: hybridio, 3: libhybridio-dev).
man_pages_in_place() {
  local page name section want bad=0
  for page in $(dpkg -L "${packages[@]}" | grep '^/usr/share/man/man[0-9]/.'); do
    name=$(basename "$page"); name=${name%.gz}; section=${name##*.}; name=${name%.*}
    case $section in 1|5) want=hybridio ;; 3) want=libhybridio-dev ;; *) want="no package" ;; esac
    if ! man -w "$section" "$name" | grep -qx "$page" || ! dpkg -S "$page" | grep -q "^$want:"; then
      echo "$page: man -w $section $name gives '$(man -w "$section" "$name" 2>&1)', $(dpkg -S "$page"), wanted in $want"
      bad=1
    fi
  done
  return $bad
}
if dpkg -L "${packages[@]}" | grep -q '^/usr/share/man/man[0-9]/.'; then
  check "man finds every man page, each in its section's package" man_pages_in_place
  check "man hybridio is the command's page" bash -c "man -w hybridio | grep -q '/usr/share/man/man1/hybridio\.1'"
else
  echo "    (the project installs no man pages yet: nothing to check there)"
fi

# A consumer compiled against the installed files only.
consumer=$src/tests/consumer
check "pkg-config finds hybridio in $libdir" bash -c "
  pkg-config --variable=libdir hybridio | grep -qx '$libdir' && pkg-config --libs hybridio | grep -q -- -lhybridio"
check "a C consumer compiles with pkg-config" bash -c "
  cc -o '$WORK/consumer_c' '$consumer/consumer.c' \$(pkg-config --cflags --libs hybridio)"
check "the C consumer runs against the installed libhybridio.so.0" bash -c "
  [ \"\$(readlink -f \$(ldd '$WORK/consumer_c' | awk '/libhybridio.so.0/ {print \$3}'))\" = \
    \"\$(readlink -f '$libdir/libhybridio.so.0')\" ] && '$WORK/consumer_c' '$WORK/c.bin'"
check "a C++ consumer compiles with pkg-config and runs" bash -c "
  c++ -std=c++17 -o '$WORK/consumer_cxx' '$consumer/consumer.cc' \$(pkg-config --cflags --libs hybridio) &&
  '$WORK/consumer_cxx' '$WORK/cxx.bin'"
check "find_package(hybridio) finds the installed CMake package" bash -c "
  cmake -S '$consumer' -B '$WORK/cmake' >/dev/null && cmake --build '$WORK/cmake' >/dev/null &&
  '$WORK/cmake/consumer_c' '$WORK/c2.bin'"

# The module DKMS built for each kernel (the running one may have no
# headers, and the module is only loaded in the qemu test).
version=$(dpkg-query -W -f='${Version}' hybridfs-dkms); version=${version%-*}
for kv in "${kvs[@]}"; do
  check "dkms status: hybridfs $version installed for $kv" bash -c "
    dkms status -m hybridfs -v '$version' -k '$kv' | tee /dev/stderr | grep -q ': installed'"
  ko=$(ls /lib/modules/"$kv"/updates/dkms/hybridfs.ko* 2>/dev/null | head -n 1)
  check "hybridfs.ko is in /lib/modules/$kv/updates/dkms" test -n "$ko"
  check "modinfo: the module is hybridfs, built for $kv" bash -c "
    [ \"\$(modinfo -F name '$ko')\" = hybridfs ] && modinfo -F vermagic '$ko' | grep -q '^$kv '"
  check "depmod ran: modinfo -k $kv hybridfs finds the DKMS module" bash -c "modinfo -k '$kv' hybridfs | grep -q '^filename: *$ko'"
done

# The same package in the trixie root builds for its 7.x kernel.
cp "$(ls "$pkgbuild"/debs/hybridfs-dkms_*.deb)" "$troot/tmp/"
check "in the trixie root, dpkg -i hybridfs-dkms builds the module for $tkv" \
  in_troot sh -c "dpkg -i /tmp/hybridfs-dkms_*.deb"
check "dkms status: hybridfs $version installed for $tkv" bash -c "
  chroot '$troot' dkms status -m hybridfs -v '$version' -k '$tkv' | tee /dev/stderr | grep -q ': installed'"
tko=$(ls "$troot"/usr/lib/modules/"$tkv"/updates/dkms/hybridfs.ko* 2>/dev/null | head -n 1)
check "hybridfs.ko is in the root's /lib/modules/$tkv/updates/dkms" test -n "$tko"
check "modinfo: the module is hybridfs, built for $tkv" bash -c "
  modinfo -F vermagic '$tko' | grep -q '^$tkv '"
check "dkms.conf declares the kernels it builds for" bash -c "
  grep -q '^BUILD_EXCLUSIVE_KERNEL=' /usr/src/hybridfs-$version/dkms.conf"
check "dpkg --purge in the trixie root removes the module" bash -c "
  chroot '$troot' env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin dpkg --purge hybridfs-dkms >/dev/null 2>&1 &&
  ! ls '$troot'/usr/lib/modules/'$tkv'/updates/dkms/hybridfs.ko* 2>/dev/null | grep ."

# Purging leaves nothing behind.
check "dpkg --purge removes the packages" dpkg --purge "${packages[@]}"
check "nothing of the packages is left" bash -c "
  ! ls /usr/bin/hybridio '$libdir'/libhybridio* /usr/include/hybridio /usr/src/hybridfs-* \
       /var/lib/dkms/hybridfs /lib/modules/*/updates/dkms/hybridfs.ko* 2>/dev/null | grep ."
finish
