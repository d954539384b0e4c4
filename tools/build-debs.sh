#!/usr/bin/env bash
# Builds the Debian packages: tools/build-debs.sh [BUILD_DIR] [extra cmake args...]
# Configures BUILD_DIR (default ./build-deb) for /usr with only what the
# packages hold (library, shim, command; no tests, benchmarks or simulator),
# builds it and runs CPack.  The .deb files land in BUILD_DIR/debs:
#   libhybridio0, libhybridio-dev, hybridio, hybridfs-dkms (docs/packaging.md).
set -euo pipefail
cd "$(dirname "$0")/.."
build_dir=${1:-build-deb}
shift || true
cmake -S . -B "$build_dir" -DCMAKE_INSTALL_PREFIX=/usr -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  -DHYBRIDIO_WERROR=ON -DHYBRIDIO_BUILD_TESTS=OFF -DHYBRIDIO_BUILD_BENCH=OFF \
  -DHYBRIDIO_BUILD_SIMULATOR=OFF "$@" >/dev/null
cmake --build "$build_dir" -j "$(nproc)"
rm -f "$build_dir"/debs/*.deb
(cd "$build_dir" && cpack -G DEB -B "$PWD/debs" >/dev/null)
ls "$build_dir"/debs/*.deb
