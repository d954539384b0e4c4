#!/usr/bin/env bash
# Every test: set up, build with warnings as errors, run the whole CTest
# suite, then rebuild the library with AddressSanitizer and
# UndefinedBehaviorSanitizer and run its tests again, then boot each kernel
# the module supports (6.1, 6.12, 7.x) in qemu for the kernel module's tests.
set -euo pipefail
cd "$(dirname "$0")/.."
start=$(date +%s)
# Learned path costs (docs/policy.md) never go to the user's state directory
# from here; CTest also sets this, and HYBRIDIO_LEARN=off, for every test.
export HYBRIDIO_STATE_DIR="$PWD/build/test-state"
step() { printf '\n=== %s (%ds)\n' "$*" $(( $(date +%s) - start )); }

step "setup"
./tools/setup-debian.sh
# The kernels the module is also tested on (6.12, and 7.x in a trixie root:
# tools/setup-kernels.sh) are fetched and installed in the background while
# the library builds: that is network and disk, the build is CPU.
mkdir -p build
kernels_start=$(date +%s)
./tools/setup-kernels.sh >build/setup-kernels.log 2>&1 &
kernels_pid=$!

step "build"
./tools/build.sh build
# The packaging test installs hybridfs-dkms for every kernel: they must be there.
step "waiting for tools/setup-kernels.sh"
if ! wait $kernels_pid; then
  cat build/setup-kernels.log
  echo "tools/setup-kernels.sh failed" >&2
  exit 1
fi
cat build/setup-kernels.log
echo "setup-kernels.sh: done $(( $(date +%s) - kernels_start )) s after it started in the background"
step "tests"
ctest --test-dir build --output-on-failure -j 2 --timeout 900

step "sanitizer build (address,undefined)"
./tools/build.sh build-asan -DHYBRIDIO_SANITIZE=address,undefined -DHYBRIDIO_BUILD_SIMULATOR=OFF \
  -DHYBRIDIO_BUILD_BENCH=OFF -DCMAKE_BUILD_TYPE=Debug
step "sanitizer tests"
ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
  ctest --test-dir build-asan --output-on-failure -j 2 --timeout 900

if [ -x kmod/tests/run-vm-tests.sh ]; then
  step "kernel module in a VM"
  kmod/tests/run-vm-tests.sh
fi
step "all tests passed"
