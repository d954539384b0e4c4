#!/usr/bin/env bash
# sqlite3 (small unaligned writes, locks) with PRAGMA integrity_check, and a
# statically linked program that LD_PRELOAD cannot reach, both under the shim.
set -u
. "$(dirname "$0")/lib.sh"
here=$(dirname "$0")

command -v sqlite3 >/dev/null || { not_ok "sqlite3 is not installed (tools/setup-debian.sh installs it)"; finish; exit; }
for v in $VARIANTS; do
  db="$WORK/t.$v.db"
  sql="PRAGMA page_size=8192; CREATE TABLE t(id INTEGER PRIMARY KEY, v BLOB);
       WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 20000)
       INSERT INTO t(v) SELECT randomblob(300 + (i % 1700)) FROM n;
       CREATE INDEX tv ON t(length(v)); DELETE FROM t WHERE id % 7 = 0; VACUUM;"
  check "sqlite3 inserts, deletes and vacuum [$v]" shim "$v" sqlite3 "$db" "$sql"
  check "sqlite3 PRAGMA integrity_check under the shim [$v]" \
    sh -c "[ \"\$($(printf '%q ' env $(variant_env "$v") LD_PRELOAD="$SHIM") sqlite3 '$db' 'PRAGMA integrity_check;')\" = ok ]"
  check "sqlite3 PRAGMA integrity_check without the shim [$v]" sh -c "[ \"\$(sqlite3 '$db' 'PRAGMA integrity_check;')\" = ok ]"
  check "sqlite3 row count [$v]" sh -c "[ \"\$(sqlite3 '$db' 'SELECT count(*) FROM t;')\" = 17143 ]"
done

cc -static -O2 -o "$WORK/static-writer" "$here/static_writer.c" 2>"$WORK/cc.log" || { not_ok "cannot link a static program: $(cat "$WORK/cc.log")"; finish; exit; }
reset_stats
check "a static program runs unaffected under LD_PRELOAD" shim hybrid "$WORK/static-writer" "$WORK/static.bin"
check "the static program's file is exact" sh -c "[ \"\$(sha256sum <'$WORK/static.bin')\" = \"\$('$WORK/static-writer' - | sha256sum)\" ]"
finish
