#!/usr/bin/env bash
# Installs the built project into a scratch prefix, then builds and runs a
# consumer with find_package(hybridio), and checks the pkg-config file.
# Usage: run_consumer_test.sh BUILD_DIR SOURCE_DIR
set -euo pipefail
build=$1 src=$2
work=$(mktemp -d "$build/consumer-test.XXXXXX")
trap 'rm -rf "$work"' EXIT
cmake --install "$build" --prefix "$work/prefix" >/dev/null
cmake -S "$src" -B "$work/build" -DCMAKE_PREFIX_PATH="$work/prefix" >/dev/null
cmake --build "$work/build" >/dev/null
LD_LIBRARY_PATH="$work/prefix/lib" "$work/build/consumer_c" "$work/c.bin"
LD_LIBRARY_PATH="$work/prefix/lib" "$work/build/consumer_cxx" "$work/cxx.bin"
PKG_CONFIG_PATH="$work/prefix/lib/pkgconfig" pkg-config --libs hybridio | grep -q -- '-lhybridio'
# Only the C API is exported from the shared library.
if nm -D --defined-only "$work/prefix/lib/libhybridio.so" | awk '{print $3}' | grep -v '^hio_' | grep -v '^HYBRIDIO_0$' | grep .; then
  echo "libhybridio.so exports symbols outside the C API" >&2
  exit 1
fi
echo "consumer test ok"
