#!/usr/bin/env bash
# Copies the kernel makes without the shim seeing a byte (copy_offload.h):
# cp and cat (copy_file_range), Python's shutil (sendfile) and rsync (read
# and write), within one filesystem and onto others: a tmpfs and an xfs
# loop filesystem mounted here (root), and /dev/shm, which the shim's path
# rules leave alone.  Every copy is byte for byte; the stats show
# which copies took the hybrid path and that the kernel kept the rest.
set -u
. "$(dirname "$0")/lib.sh"

size=$((96 << 20))
head -c $size /dev/urandom >"$WORK/src"

# copied_bytes STATS: bytes the shim wrote, on every path.
copied_bytes() {
  "$PY" -c "import json,sys; s=json.load(open(sys.argv[1])); print(sum(p['bytes'] for p in s['write'].values()))" "$1" 2>/dev/null || echo 0
}

mkdir -p "$WORK/same"
shm=$(mktemp -d /dev/shm/hio-copies.XXXXXX)
targets="same:$WORK/same shm:$shm"
mounts=""
if [ "$(id -u)" = 0 ]; then
  mkdir -p "$WORK/tmpfs" "$WORK/xfs"
  mount -t tmpfs -o size=512M hio-copies "$WORK/tmpfs" && mounts="$WORK/tmpfs" && targets="$targets tmpfs:$WORK/tmpfs"
  if truncate -s 1G "$WORK/xfs.img" && mkfs.xfs -q "$WORK/xfs.img" && mount -o loop "$WORK/xfs.img" "$WORK/xfs"; then
    mounts="$mounts $WORK/xfs" && targets="$targets xfs:$WORK/xfs"
  else
    not_ok "could not make an xfs loop filesystem (tools/setup-debian.sh installs xfsprogs)"
  fi
else
  echo "# skip tmpfs and xfs targets: mounting them needs root"
fi
cleanup() { for m in $mounts; do umount "$m"; done; rm -rf "$shm" "$WORK"; }
trap cleanup EXIT

# run_copy NAME DEST COMMAND...: COMMAND copies $WORK/src to DEST under the
# shim (forced direct at 64K, so every copy it takes shows in the stats).
run_copy() {
  local name=$1 dest=$2; shift 2
  rm -f "$dest" "$WORK/copy.json"
  env $(variant_env direct-low) HYBRIDIO_STATS="$WORK/copy.json" LD_PRELOAD="$SHIM" "$@" 2>"$WORK/copy.err" &&
    cmp -s "$WORK/src" "$dest" || { echo "    $(cat "$WORK/copy.err")"; return 1; }
}

for t in $targets; do
  kind=${t%%:*} dir=${t#*:}
  check "cp to $kind, byte for byte" run_copy cp "$dir/cp" cp "$WORK/src" "$dir/cp"
  cp_bytes=$(copied_bytes "$WORK/copy.json")
  check "cat to $kind, byte for byte" run_copy cat "$dir/cat" sh -c "cat '$WORK/src' > '$dir/cat'"
  cat_bytes=$(copied_bytes "$WORK/copy.json")
  if [ "$kind" = same ]; then
    # The kernel's own copy within one filesystem (a splice on ext4, a
    # reflink on xfs or btrfs) is left to it.
    check "cp and cat within one filesystem are the kernel's copy" test "$cp_bytes" = 0 -a "$cat_bytes" = 0
  elif [ "$kind" = shm ]; then
    check "cp and cat to /dev/shm, which the shim leaves alone, are not taken" test "$cp_bytes" = 0 -a "$cat_bytes" = 0
  else
    check "cp to $kind took the hybrid path ($cp_bytes bytes)" test "$cp_bytes" = $size
    check "cat to $kind took the hybrid path ($cat_bytes bytes)" test "$cat_bytes" = $size
  fi
  check "python shutil.copyfile (sendfile) to $kind, byte for byte" \
    run_copy shutil "$dir/py" "$PY" -c "import shutil, sys; shutil.copyfile(sys.argv[1], sys.argv[2])" "$WORK/src" "$dir/py"
  py_bytes=$(copied_bytes "$WORK/copy.json")
  if [ "$kind" = shm ]; then
    check "shutil's sendfile to /dev/shm is the kernel's ($py_bytes bytes)" test "$py_bytes" = 0
  else
    check "shutil's sendfile to $kind took the hybrid path ($py_bytes bytes)" test "$py_bytes" = $size
  fi
  check "rsync to $kind, byte for byte" run_copy rsync "$dir/rsync" rsync "$WORK/src" "$dir/rsync"
  check "rsync --inplace over an existing copy, byte for byte" sh -c "
    head -c 1000 /dev/zero | dd of='$dir/rsync' conv=notrunc status=none &&
    env $(variant_env direct-low) LD_PRELOAD='$SHIM' rsync --inplace --no-whole-file '$WORK/src' '$dir/rsync' &&
    cmp -s '$WORK/src' '$dir/rsync'"
  rm -f "$dir"/*
done
finish
