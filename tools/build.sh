#!/usr/bin/env bash
# Configures and builds Hybrid-IO: tools/build.sh [BUILD_DIR] [extra cmake args...]
# Default BUILD_DIR is ./build; warnings are errors.
set -euo pipefail
cd "$(dirname "$0")/.."
build_dir=${1:-build}
shift || true
cmake -S . -B "$build_dir" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DHYBRIDIO_WERROR=ON "$@" >/dev/null
cmake --build "$build_dir" -j "$(nproc)"
