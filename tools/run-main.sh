#!/usr/bin/env bash
# The main job on built-in defaults: set up, build, then write and restore a
# checkpoint of twice the dirty limit under each I/O policy (3 runs) and print the comparison table.
# Extra arguments go to `hybridio checkpoint` (see --help), e.g. --size=8G.
set -euo pipefail
cd "$(dirname "$0")/.."
./tools/setup-debian.sh
./tools/build.sh build
mkdir -p out
exec ./build/bin/hybridio checkpoint --dir=out --json=out/checkpoint.json "$@"
