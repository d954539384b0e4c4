#!/usr/bin/env bash
# Python programs under the shim: torch.save/torch.load, numpy, os calls,
# mmap after write and forked children; every round trip bit-identical, and
# the stats show direct bytes (proof that the fast path was taken).
set -u
. "$(dirname "$0")/lib.sh"
here=$(dirname "$0")

"$PY" -c "import numpy, torch" 2>/dev/null || { not_ok "Debian's python3-numpy/python3-torch are missing (tools/setup-debian.sh)"; finish; exit; }
for v in $VARIANTS; do
  for step in torch_roundtrip numpy_roundtrip os_calls mmap_after_write fork_children close_every_fd subprocess_children; do
    reset_stats
    check "python $step [$v]" shim "$v" "$PY" "$here/python_roundtrips.py" "$WORK" "$step"
    case $step in
      torch_roundtrip|numpy_roundtrip|fork_children|close_every_fd|subprocess_children) check "python $step took the direct path [$v]" has_direct write ;;
    esac
    rm -f "$WORK"/*.bin "$WORK"/*.pt "$WORK"/*.npy "$WORK"/*.npz "$WORK"/spawn.*
  done
done
finish
