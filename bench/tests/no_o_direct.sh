#!/bin/sh
# bench.no_o_direct_skipped: on ramfs (no O_DIRECT, no RWF_DONTCACHE) the direct and
# dontcache rows are skipped with the reason, never measured as something else.
# Needs root to mount ramfs; exits 77 (skipped) otherwise.
set -eu
cli=$1 schema=$2 check=$3
[ "$(id -u)" = 0 ] || { echo "not root: cannot mount ramfs"; exit 77; }
mnt=$(mktemp -d "${TMPDIR:-/tmp}/hybridio-ramfs.XXXXXX")
mount -t ramfs ramfs "$mnt" 2>/dev/null || { rmdir "$mnt"; echo "cannot mount ramfs here"; exit 77; }
trap 'umount "$mnt"; rmdir "$mnt"' EXIT
/usr/bin/python3 "$check" --schema "$schema" --expect-results 2 --expect-skipped 2 -- \
  "$cli" bench --rw=write --bs=1M --size=4M --repeat=1 --directory="$mnt" --json="$mnt/report.json" > "$mnt/out.txt"
cat "$mnt/out.txt"
grep -q "direct     write .*skipped: the filesystem refuses O_DIRECT" "$mnt/out.txt"
grep -q "no O_DIRECT here" "$mnt/out.txt"
echo "no-O_DIRECT rows skipped as expected"
