#!/usr/bin/env bash
# stress-ng's file I/O stressors with --verify, plain and under the shim in each mode
# (docs/testing.md, "External suites"): one stress-ng run of every stressor below at
# once, one instance each, small files, STRESS_NG_TIMEOUT seconds.  Per stressor the
# outcome (ok, skipped, fail, verify-fail) must agree with plain, and no run under the
# shim may report a verification failure.
set -u
source "$(dirname "$0")/lib.sh"
require_package stress-ng
STRESS_NG_TIMEOUT=${STRESS_NG_TIMEOUT:-3}

# name and options; every one of them writes or reads files (or descriptors) through
# the calls the shim interposes.
STRESSORS=(
  "hdd --hdd-bytes 16m --hdd-write-size 1m --hdd-opts wr-seq,rd-seq"  # writes, reads back, verified
  "seek --seek-size 16m"                          # random pread/pwrite
  "readahead --readahead-bytes 16m"               # readahead(2) then reads, verified
  "iomix --iomix-bytes 16m"                       # a mix of read, write, sync, fadvise, mmap
  "fallocate --fallocate-bytes 16m"
  "fpunch"                                        # hole punches in a 16 MB file, verified
  "sync-file --sync-file-bytes 16m"
  "copy-file --copy-file-bytes 128m"              # copy_file_range (its minimum size)
  "fsize"                                         # writes at RLIMIT_FSIZE (SIGXFSZ)
  "dup"
  "fcntl"
  "lockf"
  "flock"
  "lease --lease-breakers 1"                      # file leases and their breaking
  "mmap --mmap-bytes 16m --mmap-file"             # file-backed mappings with msync
  "aio --aio-requests 16"                         # POSIX AIO (glibc's threads)
  "sendfile --sendfile-size 1m"
)
names=()
args=()
for s in "${STRESSORS[@]}"; do
  set -- $s
  names+=("$1"); args+=("--$1" 1); shift; args+=("$@")
done

run_one() {
  local m=$1 rc
  (cd "$WORK/$m" && env $(mode_env "$m") stress-ng "${args[@]}" --verify --timeout "$STRESS_NG_TIMEOUT" \
      --temp-path "$WORK/$m" --metrics-brief >"$WORK/$m/stress-ng.log" 2>&1)
  rc=$?
  echo "# exit status $rc"
  "$PY" "$HERE/compare.py" parse-stress-ng "$WORK/$m/stress-ng.log" "$rc" "$WORK/$m.json" "${names[@]}"
  cp "$WORK/$m/stress-ng.log" "$WORK/$m.log"
}

echo "# $(stress-ng --version 2>&1 | head -1): ${names[*]}, ${STRESS_NG_TIMEOUT} s, --verify"
rc=0
run_all stress-ng "$HERE/stress_ng_exclusions.txt" || rc=1
# No verification failure under the shim, whatever plain did.
for m in $MODES; do
  if grep -iE "verif|mismatch|corrupt|incorrect" "$WORK/$m.log" | grep -iE "fail|error|mismatch|corrupt|incorrect"; then
    echo "not ok - stress-ng [$m]: a verification failure under the shim (above)"
    rc=1
  fi
done
exit $rc
