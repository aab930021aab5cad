#!/usr/bin/env bash
# `tzrec parquet_meta` and `tzrec parquet_cat` on files from the Parquet test corpus (tests/data/parquet-testing).
set -uo pipefail
TZREC=$1
ROOT=$2
CORPUS=$ROOT/tests/data/parquet-testing
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT
fail() { echo "FAIL: $*"; exit 1; }

"$TZREC" parquet_meta "$CORPUS/alltypes_plain.parquet" > "$WORK/meta" || fail "parquet_meta failed"
grep -qi "snappy\|uncompressed" "$WORK/meta" || fail "parquet_meta shows no codec"
grep -q "id" "$WORK/meta" || fail "parquet_meta shows no schema"

"$TZREC" parquet_cat "$CORPUS/alltypes_plain.parquet" --columns id,bool_col --limit 3 > "$WORK/rows" \
  || fail "parquet_cat failed"
[[ $(wc -l < "$WORK/rows") -eq 3 ]] || fail "expected 3 rows, got $(wc -l < "$WORK/rows")"
# Rows must equal the independent reader's rows (expected/*.json) on the selected columns.
/usr/bin/python3 - "$WORK/rows" "$CORPUS/expected/alltypes_plain.parquet.json" <<'PY' || fail "rows differ"
import json, sys
got = [json.loads(line) for line in open(sys.argv[1])]
want = json.load(open(sys.argv[2]))[:3]
for g, w in zip(got, want):
    assert list(g) == ["id", "bool_col"], g
    assert g["id"] == w["id"] and g["bool_col"] == w["bool_col"], (g, w)
PY
"$TZREC" parquet_cat "$CORPUS/alltypes_plain.parquet" --offset 6 > "$WORK/tail" || fail "parquet_cat --offset"
[[ $(wc -l < "$WORK/tail") -eq 2 ]] || fail "--offset 6 of 8 rows should print 2"

"$TZREC" parquet_cat "$CORPUS/alltypes_plain.parquet" --columns nope > /dev/null 2> "$WORK/err" \
  && fail "unknown column accepted"
grep -q "^error:.*nope" "$WORK/err" || { cat "$WORK/err"; fail "unknown column error does not name it"; }
head -c 100 "$CORPUS/alltypes_plain.parquet" > "$WORK/truncated.parquet"
"$TZREC" parquet_meta "$WORK/truncated.parquet" > /dev/null 2> "$WORK/err" && fail "truncated file accepted"
grep -q "^error:.*truncated.parquet" "$WORK/err" || { cat "$WORK/err"; fail "truncated error does not name the file"; }
echo OK
