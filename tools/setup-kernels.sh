#!/usr/bin/env bash
# Installs the kernels besides Debian 12's own 6.1 that hybridfs is built
# and VM-tested on (docs/kmod.md):
#   6.12 LTS  bookworm-backports' image and headers, installed on this
#             machine (its kbuild tools are built for bookworm);
#   7.x       trixie-backports' newest kernel, in a minimal trixie root made
#             with debootstrap (its kbuild tools need trixie's C library):
#             headers, kbuild and gcc installed there, the kernel image and
#             its modules unpacked in its /kernel.
# The backports suites are added to apt here only, pinned so that only the
# kernel's own packages can come from them: nothing else is upgraded.
# Idempotent (what is installed is kept); run as root.
# Environment: HFS_TRIXIE_ROOT (default /var/lib/hybridio/trixie-root).
set -euo pipefail

TRIXIE_ROOT=${HFS_TRIXIE_ROOT:-/var/lib/hybridio/trixie-root}
MIRROR=http://deb.debian.org/debian
start=$(date +%s)
log() { echo "setup-kernels: $* ($(( $(date +%s) - start )) s)"; }
export DEBIAN_FRONTEND=noninteractive

if [ "$(id -u)" -ne 0 ]; then
  echo "setup-kernels.sh: run as root (it installs packages with apt-get)" >&2
  exit 1
fi

# ---- 6.12 from bookworm-backports, on this machine ----
# Only linux-image-6.12.*, linux-headers-6.12.* and linux-kbuild-6.12.* may
# come from bookworm-backports; every other package of it is never taken.
cat >/etc/apt/sources.list.d/hybridio-bookworm-backports.sources <<EOF
Types: deb
URIs: $MIRROR
Suites: bookworm-backports
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg
EOF
cat >/etc/apt/preferences.d/hybridio-bookworm-backports <<'EOF'
Package: *
Pin: release n=bookworm-backports
Pin-Priority: -1

Package: /^linux-(image|headers|kbuild)-6\.12\./
Pin: release n=bookworm-backports
Pin-Priority: 500
EOF
if ! ls -d /usr/src/linux-headers-6.12.*-amd64 >/dev/null 2>&1 ||
   ! ls /boot/vmlinuz-6.12.*-amd64 >/dev/null 2>&1; then
  apt-get update -q >/dev/null
  # The metapackage names the current ABI; it is not installed itself (on
  # this machine linux-headers-amd64 stays on 6.1).
  hdr=$(apt-cache show 'linux-headers-amd64/bookworm-backports' |
        sed -n 's/^Depends: .*\(linux-headers-6\.12\.[^ ,]*-amd64\).*/\1/p' | head -n 1)
  [ -n "$hdr" ] || { echo "setup-kernels: no 6.12 headers in bookworm-backports" >&2; exit 1; }
  img=${hdr/headers/image}
  log "installing $img $hdr"
  # One transaction: image and headers of the same ABI.
  # No initramfs for it: the VM test boots its own (INITRD=No skips the hook).
  INITRD=No apt-get install -y -q --no-install-recommends "$img" "$hdr" >/dev/null
fi
log "6.12: $(ls -d /usr/src/linux-headers-6.12.*-amd64 | sort -V | tail -n 1)"

# ---- the newest kernel from trixie-backports, in a trixie root ----
if ! command -v debootstrap >/dev/null; then
  apt-get install -y -q --no-install-recommends debootstrap >/dev/null
fi
if [ ! -x "$TRIXIE_ROOT/usr/bin/apt-get" ]; then
  rm -rf "$TRIXIE_ROOT.new"
  mkdir -p "$TRIXIE_ROOT.new"
  log "debootstrap trixie (minbase) into $TRIXIE_ROOT"
  debootstrap --variant=minbase --include=make trixie "$TRIXIE_ROOT.new" "$MIRROR" \
    >"$TRIXIE_ROOT.debootstrap.log" 2>&1 ||
    { tail -n 20 "$TRIXIE_ROOT.debootstrap.log" >&2; exit 1; }
  mv "$TRIXIE_ROOT.new" "$TRIXIE_ROOT"
fi
if ! ls -d "$TRIXIE_ROOT"/usr/src/linux-headers-*-amd64 >/dev/null 2>&1 ||
   [ ! -x "$TRIXIE_ROOT/usr/sbin/dkms" ] ||
   ! ls "$TRIXIE_ROOT"/kernel/usr/lib/modules/*/vmlinuz >/dev/null 2>&1; then
  cat >"$TRIXIE_ROOT/etc/apt/sources.list" <<EOF
deb $MIRROR trixie main
deb $MIRROR trixie-backports main
EOF
  in_root() { chroot "$TRIXIE_ROOT" env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin \
    DEBIAN_FRONTEND=noninteractive "$@"; }
  in_root apt-get update -q >/dev/null
  hdr=$(in_root apt-cache show 'linux-headers-amd64/trixie-backports' |
        sed -n 's/^Depends: .*\(linux-headers-[0-9][^ ,]*-amd64\) .*/\1/p' | head -n 1)
  [ -n "$hdr" ] || { echo "setup-kernels: no headers in trixie-backports" >&2; exit 1; }
  kv=${hdr#linux-headers-}
  log "installing $hdr in the trixie root"
  # binutils: gcc runs `as` and `ld` by those names; dkms: the packaging
  # test installs hybridfs-dkms in the root too.
  in_root apt-get install -y -q --no-install-recommends "$hdr" binutils dkms >/dev/null
  # The image's packages are unpacked into /kernel, not installed: no
  # initramfs tool runs in the root, and the VM test needs only the kernel
  # and its modules (/kernel/usr/lib/modules/<version>/{vmlinuz,kernel/}).
  in_root sh -c "rm -rf /kernel /kernel.new /tmp/kernel-debs && mkdir -p /tmp/kernel-debs &&
    cd /tmp/kernel-debs && apt-get download -q linux-binary-$kv linux-modules-$kv >/dev/null &&
    for d in *.deb; do dpkg-deb -x \$d /kernel.new; done && mv /kernel.new /kernel &&
    cd / && rm -rf /tmp/kernel-debs"
  in_root apt-get clean
fi
log "trixie root: $(ls -d "$TRIXIE_ROOT"/usr/src/linux-headers-*-amd64 | sort -V | tail -n 1)"
