#!/usr/bin/env bash
# docs/preload.md states exactly which calls the shim interposes: every
# function the built libhybridio_preload.so exports (nm -D) has a row in its
# table "Every exported symbol", and the table names nothing the library
# does not export.
set -u
. "$(dirname "$0")/lib.sh"
doc="$(dirname "$0")/../../docs/preload.md"

nm -D --defined-only "$SHIM" | awk '$2 ~ /^[TWi]$/ { print $3 }' | sort -u >"$WORK/exported"
# The first column of the table under the heading "Every exported symbol",
# up to the next heading: each `name` in it.
awk '/^### Every exported symbol/ { on = 1; next } /^#/ { on = 0 } on && /^\|/' "$doc" |
  awk -F'|' '{ print $2 }' | grep -o '`[A-Za-z_0-9]*`' | tr -d '`' | sort -u >"$WORK/documented"

check "the shim exports functions (nm -D found $(wc -l <"$WORK/exported"))" test -s "$WORK/exported"
check "the doc's table lists symbols ($(wc -l <"$WORK/documented"))" test -s "$WORK/documented"
for sym in $(comm -23 "$WORK/exported" "$WORK/documented"); do
  not_ok "$sym is exported by the shim but missing from docs/preload.md"
done
for sym in $(comm -13 "$WORK/exported" "$WORK/documented"); do
  not_ok "$sym is in docs/preload.md but the shim does not export it"
done
check "every exported symbol is documented and every documented one exported" \
  cmp "$WORK/exported" "$WORK/documented"
finish
