#!/usr/bin/env bash
# CPython's own file-I/O regression tests (Debian's libpython3.11-testsuite), plain and
# under the shim in each mode; per-case outcomes must agree (docs/testing.md, "External
# suites").  The selection: MODULES below, minus cpython_unselected.txt (slow and not file
# I/O); exclusions with their reasons: cpython_exclusions.txt, and every case that fails plain.
set -u
source "$(dirname "$0")/lib.sh"
require_package libpython3.11-testsuite python3

MODULES=${CPYTHON_MODULES:-"test_fileio test_file test_bufio test_univnewlines test_fcntl test_largefile test_mmap test_io test_os test_posix test_shutil"}
ignore=()
while read -r pat; do
  case $pat in ''|'#'*) ;; *) ignore+=(-i "$pat") ;; esac
done <"$HERE/cpython_unselected.txt"

run_one() {
  local m=$1
  mkdir -p "$WORK/$m/tmp"
  # regrtest makes its working directory under TMPDIR: the scratch directory, on disk.
  (cd "$WORK/$m" && env $(mode_env "$m") TMPDIR="$WORK/$m/tmp" \
      "$PY" -m test --junit-xml "$WORK/$m.xml" --timeout 600 "${ignore[@]}" $MODULES)
  echo "# exit status $?"
  "$PY" "$HERE/compare.py" parse-junit "$WORK/$m.xml" "$WORK/$m.json"
}

echo "# CPython $("$PY" -c 'import platform; print(platform.python_version())'): $MODULES"
echo "# not selected (slow, not file I/O): $(( ${#ignore[@]} / 2 )) patterns in tests/external/cpython_unselected.txt"
run_all cpython "$HERE/cpython_exclusions.txt"
