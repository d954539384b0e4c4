#!/usr/bin/env bash
# Installs everything Hybrid-IO needs to build, test and benchmark on
# Debian 12 (bookworm), from Debian's own packages.  Idempotent; run as root.
set -euo pipefail

packages=(
  # build
  build-essential cmake pkg-config git
  # libhybridio
  liburing-dev libnuma-dev
  # JSON in the tools (cli/, bench/, simulator/)
  nlohmann-json3-dev
  # tests and micro-benchmarks
  libgtest-dev libgmock-dev libbenchmark-dev
  # the simulator's plots and the bench's (bench/compare/compare.py plot)
  libsimgrid-dev python3 python3-matplotlib parallel
  # rendering the man pages (groff -man -ww in the man.render test)
  groff-base
  # real programs the tests and comparisons drive
  fio python3-numpy python3-torch python3-jsonschema sqlite3 tar rsync
  # suites no one here wrote, run plain and under the shim (tests/external/): CPython's
  # regression tests, gnulib's tests (gnulib-tool needs autoconf and automake), stress-ng
  libpython3.11-testsuite gnulib autoconf automake stress-ng
  # loop filesystems the differential tests run on besides ext4
  xfsprogs btrfs-progs
  # the kernel module and its VM test (Debian's 6.1 kernel under qemu; the others,
  # 6.12 and 7.x, come from tools/setup-kernels.sh; xz unpacks their modules)
  linux-image-amd64 linux-headers-amd64 qemu-system-x86 busybox-static kmod cpio e2fsprogs xz-utils
  # the VM's power-cut test (dm-flakey, dm-log-writes tables)
  dmsetup
  # the Debian packages (tools/build-debs.sh) and their test: DKMS builds hybridfs
  dkms
)

if [ "$(id -u)" -ne 0 ]; then
  if command -v sudo >/dev/null; then exec sudo "$0" "$@"; fi
  echo "setup-debian.sh: run as root (it installs packages with apt-get)" >&2
  exit 1
fi

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -eq 0 ]; then
  echo "setup-debian.sh: all ${#packages[@]} packages already installed"
  exit 0
fi
echo "setup-debian.sh: installing ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
apt-get update -q
# One transaction, so that the kernel image and headers have matching versions.
apt-get install -y -q --no-install-recommends "${missing[@]}"
