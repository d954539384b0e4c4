#!/usr/bin/env bash
# Every test: set up, build with warnings as errors, run the whole CTest
# suite, then rebuild the library with AddressSanitizer and
# UndefinedBehaviorSanitizer and run its tests again, then boot Debian's
# 6.1 kernel in qemu for the kernel module's tests.
set -euo pipefail
cd "$(dirname "$0")/.."
start=$(date +%s)
# Learned path costs (docs/policy.md) never go to the user's state directory
# from here; CTest also sets this, and HYBRIDIO_LEARN=off, for every test.
export HYBRIDIO_STATE_DIR="$PWD/build/test-state"
step() { printf '\n=== %s (%ds)\n' "$*" $(( $(date +%s) - start )); }

step "setup"
./tools/setup-debian.sh

step "build"
./tools/build.sh build
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
