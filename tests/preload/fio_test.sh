#!/usr/bin/env bash
# fio with data verification under the shim: the sync, psync, vsync and
# pvsync2 engines, aligned and unaligned block sizes, two jobs; and data
# written under the shim verified without it, and the reverse.
# PRELOAD_FIO_ENGINES picks fewer engines (the runs on other filesystems).
set -u
. "$(dirname "$0")/lib.sh"

command -v fio >/dev/null || { not_ok "fio is not installed (tools/setup-debian.sh installs it)"; finish; exit; }
common=(--directory="$WORK" --verify=crc32c --verify_fatal=1 --verify_state_save=0 --group_reporting --minimal)

for v in $VARIANTS; do
  for engine in ${PRELOAD_FIO_ENGINES:-sync psync vsync pvsync2}; do
    reset_stats
    check "fio $engine, 4M blocks, 2 jobs, write + verify [$v]" \
      shim "$v" fio --name=aligned-$engine "${common[@]}" --ioengine=$engine --rw=write --bs=4M --size=64M \
        --numjobs=2 --do_verify=1 --fsync_on_close=1
    check "fio $engine aligned run took the direct path [$v]" has_direct write
    reset_stats
    check "fio $engine, unaligned 1k-6M blocks, write + verify [$v]" \
      shim "$v" fio --name=unaligned-$engine "${common[@]}" --ioengine=$engine --rw=write --bs_unaligned=1 \
        --bsrange=1k-6M --size=48M --do_verify=1
  done
  # Written with the shim, verified by a plain fio; then the reverse.
  check "fio write under the shim, verify without [$v]" \
    sh -c "$(printf '%q ' env $(variant_env "$v") LD_PRELOAD="$SHIM" fio --name=cross1 "${common[@]}" --ioengine=psync --rw=write --bs=3M --size=60M --do_verify=0) && \
           fio --name=cross1 $(printf '%q ' "${common[@]}") --ioengine=psync --rw=read --bs=3M --size=60M --verify_only=1"
  check "fio write without the shim, verify under it [$v]" \
    sh -c "fio --name=cross2 $(printf '%q ' "${common[@]}") --ioengine=pvsync2 --rw=write --bs=5M --size=60M --do_verify=0 && \
           $(printf '%q ' env $(variant_env "$v") LD_PRELOAD="$SHIM" fio --name=cross2 "${common[@]}" --ioengine=pvsync2 --rw=read --bs=5M --size=60M --verify_only=1)"
  rm -f "$WORK"/*.0 "$WORK"/*.1
done
finish
