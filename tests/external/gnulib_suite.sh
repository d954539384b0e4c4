#!/usr/bin/env bash
# gnulib's tests of the functions the shim interposes (Debian's gnulib), plain and under
# the shim in each mode; per-test results of automake's harness must agree
# (docs/testing.md, "External suites").  The test directory is made with gnulib-tool,
# configured and built once, and kept under the build tree (build/external-gnulib/),
# keyed by gnulib's version and the module list; each run works in a copy of it.
set -u
source "$(dirname "$0")/lib.sh"
require_package gnulib autoconf automake make gcc

# Modules whose functions the shim interposes (read-file reads with fread, fflush/fpurge/
# freading/fwriting look into stdio streams); gnulib-tool adds their dependencies and
# all their tests (124).  gnulib-tool is a shell script that spawns a process per step:
# on the loaded 2-core VM (50 ms per process spawn) this list took it 21.5 minutes and
# configure + make 4 more; a longer one (open, openat, creat, fopen, fdopen, freopen,
# close, fstat, stat, truncate, fclose, getline, copy-file, ...) was still computing
# its module closure after 37 minutes.
MODULES="pread pwrite read write lseek ftruncate fsync fdatasync dup dup2 dup3 fcntl fflush
  fseeko ftello fpurge freading fwriting read-file"
version=$(dpkg-query -W -f='${Version}' gnulib)
key=$(echo "$version $MODULES" | md5sum | cut -c1-12)
CACHE="$BUILD/external-gnulib/$key"

build_testdir() {
  local t0 tmp
  t0=$(date +%s)
  rm -rf "$BUILD/external-gnulib"; mkdir -p "$BUILD/external-gnulib"
  tmp="$CACHE.tmp"
  gnulib-tool --create-testdir --dir="$tmp" --with-tests --without-privileged-tests \
      --single-configure $MODULES >"$BUILD/external-gnulib/create.log" 2>&1 ||
    { tail -20 "$BUILD/external-gnulib/create.log"; return 1; }
  (cd "$tmp" && ./configure -q CFLAGS=-O1 >configure.log 2>&1 && make -j "$(nproc)" >make.log 2>&1 &&
     make -C gltests -j "$(nproc)" check TESTS= >make-check.log 2>&1) ||
    { tail -30 "$tmp"/*.log; return 1; }
  mv "$tmp" "$CACHE"
  echo "# gnulib $version: test directory made, configured and built in $(( $(date +%s) - t0 )) s (cached in $CACHE)"
}
if [ ! -f "$CACHE/gltests/Makefile" ]; then
  build_testdir || fail_now "gnulib's test directory could not be made (above)"
else
  echo "# gnulib $version: test directory cached in $CACHE"
fi

run_one() {
  local m=$1
  # A copy per run (timestamps kept, so nothing is rebuilt): the harness writes its
  # .log and .trs files next to the tests.
  cp -a "$CACHE" "$WORK/$m/gl"
  (cd "$WORK/$m/gl/gltests" && env $(mode_env "$m") TMPDIR="$WORK/$m" make -k check-TESTS)
  echo "# exit status $?"
  "$PY" "$HERE/compare.py" parse-automake "$WORK/$m/gl/gltests" "$WORK/$m.json"
  rm -rf "$WORK/$m/gl"
}

echo "# gnulib $version, modules and their tests: $(echo $MODULES)"
run_all gnulib "$HERE/gnulib_exclusions.txt"
