#!/usr/bin/env bash
# `tzrec resolve_sid_collisions` on tests/data/sid/items.csv (80 items, codebook 3,4,5, capacity 2),
# whose resolved codes and slots TorchEasyRec's own collision core computed
# (tests/data/sid/expected.json, tests/tools/sid_collision_reference.py):
#   - integer ids, candidate strategy, CSV in: item_to_sid (CSV) holds each item's origin codes,
#     resolved codes, offset codes and slot as expected; sid_to_items (Parquet) groups every item
#     under its resolved SID in slot order; manifest.json describes both;
#   - string ids, random strategy, item_to_sid as Parquet under --item_to_sid_root;
#   - appending 30 items onto the first 50 published (--from_generation): the published items keep
#     their SIDs, the new ones are placed as TorchEasyRec's core places them, the deltas hold them;
#   - --rate_only writes nothing; evaluate_sid_quality compares origin and resolved codes;
#   - bad runs give one error line.
# Usage: resolve_sid_collisions_test.sh <tzrec binary> <repo root>
set -euo pipefail
TZREC=$1
ROOT=$2
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT
fail() { echo "FAIL: $*"; exit 1; }
PY=/usr/bin/python3
cd "$WORK"
mkdir in
cp "$ROOT/tests/data/sid/items.csv" in/
EXPECTED="$ROOT/tests/data/sid/expected.json"

"$TZREC" resolve_sid_collisions --input_path in/items.csv --codebook 3,4,5 --max_items_per_codebook 2 \
  --output_path bundle --generation v1 --batch_size 16 2> int.log || { cat int.log; fail "integer ids"; }
grep -q "SID collision resolution finished: total_items=80 raw_collision_buckets=11 final_collision_buckets=9 relocated_count=16 unresolved_count=40 max_final_bucket_size=10" int.log \
  || { cat int.log; fail "integer ids: not TorchEasyRec's statistics"; }
"$TZREC" parquet_cat bundle/v1/sid_to_items/part-0.parquet > sid_to_items.json
$PY - "$EXPECTED" <<'PY' || fail "integer ids: the bundle differs from TorchEasyRec's resolution"
import csv, json, re, sys
exp = json.load(open(sys.argv[1]))["int_candidate"]
src = list(csv.DictReader(open("in/items.csv")))
out = list(csv.DictReader(open("bundle/v1/item_to_sid/part-0.csv")))
assert [r["item_id"] for r in out] == [r["item_id"] for r in src]
sizes, starts = [3, 4, 5], [0, 3, 7]
for i, (s, o) in enumerate(zip(src, out)):
    origin = [int(x) for x in s["codes"].split(",")]
    final = origin[:2] + [exp["last_codes"][i]]
    assert [int(x) for x in o["origin_codebook"].split(",")] == origin, (i, o)
    assert [int(x) for x in o["codebook"].split(",")] == final, (i, o)
    assert [int(x) for x in o["offset_codebook"].split(",")] == [c + b for c, b in zip(final, starts)], (i, o)
    assert int(o["index"]) == exp["slots"][i], (i, o)
# sid_to_items: one row per resolved SID, ascending, its items in slot order.
groups = [json.loads(l) for l in open("sid_to_items.json")]
key = lambda c: (c[0] * 4 + c[1]) * 5 + c[2]
assert [key(g["codebook"]) for g in groups] == sorted({key([int(x) for x in o["codebook"].split(",")]) for o in out})
by_sid = {}
for o in out:
    by_sid.setdefault(o["codebook"], []).append((int(o["index"]), int(o["item_id"])))
for g in groups:
    want = [i for _, i in sorted(by_sid[",".join(map(str, g["codebook"]))])]
    assert g["itemids"] == want, (g, want)
    assert g["offset_codebook"] == [c + b for c, b in zip(g["codebook"], starts)], g
m = json.load(open("bundle/v1/manifest.json"))
assert list(m) == ["bundle_uuid", "codebook", "capacity", "max_observed_items_per_sid", "artifacts", "item_id_type"], m
assert re.fullmatch(r"[0-9a-f]{12}4[0-9a-f]{3}[89ab][0-9a-f]{15}", m["bundle_uuid"]), m
assert m["codebook"] == sizes and m["capacity"] == 2 and m["max_observed_items_per_sid"] == 10, m
assert m["item_id_type"] == "int64", m
assert m["artifacts"]["sid_to_items"] == {"save_type": "parquet", "rows": len(groups), "location": "bundle/v1/sid_to_items"}, m
assert m["artifacts"]["item_to_sid"] == {"save_type": "csv", "rows": 80, "location": "bundle/v1/item_to_sid"}, m
PY

# String ids, random strategy, item_to_sid as Parquet under its own root.
"$TZREC" resolve_sid_collisions --input_path in/items.csv --item_id_field str_id --codebook 3,4,5 \
  --max_items_per_codebook 2 --strategy random --random_num_candidates 4 --output_path bundle --generation v2 \
  --item_to_sid_root table_root --item_to_sid_writer_type ParquetWriter 2> str.log || { cat str.log; fail "string ids"; }
"$TZREC" parquet_cat table_root/v2/item_to_sid/part-0.parquet > item_to_sid.json
$PY - "$EXPECTED" <<'PY' || fail "string ids: item_to_sid differs from TorchEasyRec's resolution"
import csv, json, sys
exp = json.load(open(sys.argv[1]))["str_random"]
src = list(csv.DictReader(open("in/items.csv")))
out = [json.loads(l) for l in open("item_to_sid.json")]
assert [o["item_id"] for o in out] == [s["str_id"] for s in src], out[:3]
assert [o["codebook"][2] for o in out] == exp["last_codes"]
assert [o["index"] for o in out] == exp["slots"]
m = json.load(open("bundle/v2/manifest.json"))
assert m["item_id_type"] == "string" and m["artifacts"]["item_to_sid"]["save_type"] == "parquet", m
assert m["artifacts"]["item_to_sid"]["location"] == "table_root/v2/item_to_sid", m
PY
grep -q "codebook.list.element: INT64" <<< "$("$TZREC" parquet_meta table_root/v2/item_to_sid/part-0.parquet)" \
  || fail "item_to_sid codes are not list<int64>"

# Appending: the first 50 items published as v1 (Parquet item_to_sid), the other 30 appended as
# v2: the published items keep their SIDs and slots, the new ones are placed around them exactly as
# TorchEasyRec's core places them (append_int_candidate), and v2 holds the whole corpus.
mkdir first rest
head -51 in/items.csv > first/items.csv
(head -1 in/items.csv; tail -n +52 in/items.csv) > rest/items.csv
"$TZREC" resolve_sid_collisions --input_path first/items.csv --codebook 3,4,5 --max_items_per_codebook 2 \
  --output_path chain --generation v1 --item_to_sid_writer_type ParquetWriter 2> v1.log || { cat v1.log; fail "v1"; }
"$TZREC" resolve_sid_collisions --input_path rest/items.csv --codebook 3,4,5 --max_items_per_codebook 2 \
  --output_path chain --generation v2 --from_generation v1 --item_to_sid_writer_type ParquetWriter 2> v2.log \
  || { cat v2.log; fail "append v2"; }
grep -q "append mode: 30 new items onto 50 published items" v2.log || { cat v2.log; fail "append: not logged"; }
grep -q "total_items=30 raw_collision_buckets=11 final_collision_buckets=11 relocated_count=1 unresolved_count=29 max_final_bucket_size=9" v2.log \
  || { cat v2.log; fail "append: not TorchEasyRec's statistics"; }
for a in v1/item_to_sid v2/item_to_sid v2/delta_item_to_sid v1/sid_to_items v2/sid_to_items v2/delta_sid_to_items; do
  "$TZREC" parquet_cat "chain/$a/part-0.parquet" > "${a//\//_}.json"
done
$PY - "$EXPECTED" <<'PY' || fail "append: the v2 bundle is not v1 plus TorchEasyRec's placement of the new items"
import csv, json, sys
exp = json.load(open(sys.argv[1]))["append_int_candidate"]
load = lambda n: [json.loads(l) for l in open(n + ".json")]
v1, v2, d2 = load("v1_item_to_sid"), load("v2_item_to_sid"), load("v2_delta_item_to_sid")
rest = list(csv.DictReader(open("rest/items.csv")))
assert v2[:50] == v1, "published rows changed"
assert d2 == v2[50:] and len(d2) == 30
assert [r["item_id"] for r in d2] == [int(r["item_id"]) for r in rest]
assert [r["codebook"][2] for r in d2] == exp["last_codes"]
assert [r["index"] for r in d2] == exp["slots"]
key = lambda c: (c[0] * 4 + c[1]) * 5 + c[2]
g1, g2, gd = load("v1_sid_to_items"), load("v2_sid_to_items"), load("v2_delta_sid_to_items")
by_sid = {}
for r in v2:
    by_sid.setdefault(key(r["codebook"]), []).append((r["index"], r["item_id"]))
assert [key(g["codebook"]) for g in g2] == sorted(by_sid)
for g in g2:
    assert g["itemids"] == [i for _, i in sorted(by_sid[key(g["codebook"])])], g
old = {key(g["codebook"]): g["itemids"] for g in g1}
for g in g2:
    k = key(g["codebook"])
    assert g["itemids"][:len(old.get(k, []))] == old.get(k, []), g
touched = {key(r["codebook"]) for r in d2}
assert [key(g["codebook"]) for g in gd] == sorted(touched)
assert all(g in g2 for g in gd)
m1, m2 = json.load(open("chain/v1/manifest.json")), json.load(open("chain/v2/manifest.json"))
assert m2["since_bundle_uuid"] == m1["bundle_uuid"] != m2["bundle_uuid"], (m1, m2)
assert list(m2["artifacts"]) == ["sid_to_items", "delta_sid_to_items", "item_to_sid", "delta_item_to_sid"], m2
assert m2["artifacts"]["item_to_sid"]["rows"] == 80 and m2["artifacts"]["delta_item_to_sid"]["rows"] == 30, m2
assert m2["artifacts"]["sid_to_items"]["rows"] == len(g2) and m2["artifacts"]["delta_sid_to_items"]["rows"] == len(gd), m2
assert m2["max_observed_items_per_sid"] == max(m1["max_observed_items_per_sid"], 9), m2
PY
if "$TZREC" resolve_sid_collisions --input_path first/items.csv --codebook 3,4,5 --max_items_per_codebook 2 \
     --output_path chain --generation v3 --from_generation v2 > again.log 2>&1; then
  fail "append: published items appended again"
fi
grep -q "^error: .*50 new item IDs are already published; an item cannot hold two SIDs" again.log \
  || { cat again.log; fail "append again: not the expected error"; }
if "$TZREC" resolve_sid_collisions --input_path rest/items.csv --codebook 3,4,6 --max_items_per_codebook 2 \
     --output_path chain --generation v3 --from_generation v1 > other.log 2>&1; then
  fail "append: another codebook accepted"
fi
grep -q "^error: --codebook 3,4,6 differs from the 3,4,5 published at generation 'v1'" other.log \
  || { cat other.log; fail "append with another codebook: not the expected error"; }

# --rate_only: the statistics only.
"$TZREC" resolve_sid_collisions --input_path in/items.csv --codebook 3,4,5 --max_items_per_codebook 2 --rate_only \
  2> rate.log || { cat rate.log; fail "rate_only"; }
grep -q "rate_only: skipping item_to_sid and sid_to_items writes" rate.log || fail "rate_only: not logged"
grep -q "relocated_count=16 unresolved_count=40" rate.log || fail "rate_only: other statistics"

# The resolved bundle through evaluate_sid_quality: before (origin) and after (resolved) codes.
"$TZREC" evaluate_sid_quality --input_path bundle/v1/item_to_sid/part-0.csv --codebook 3,4,5 \
  --origin_codes_field origin_codebook --codes_field codebook --summary_output quality 2> quality.log \
  || { cat quality.log; fail "evaluate_sid_quality of the bundle"; }
$PY <<'PY' || fail "evaluate_sid_quality of the bundle: unique SIDs"
import csv
out = list(csv.DictReader(open("bundle/v1/item_to_sid/part-0.csv")))
rows = {r["view"]: r for r in csv.DictReader(open("quality/part-0.csv"))}
assert int(rows["before"]["unique_sid"]) == len({o["origin_codebook"] for o in out}), rows
assert int(rows["after"]["unique_sid"]) == len({o["codebook"] for o in out}), rows
assert int(rows["delta"]["unique_sid"]) > 0, rows
PY

# Bad runs: one error line each.
expect_error() {
  local what=$1 pattern=$2
  shift 2
  if "$TZREC" resolve_sid_collisions "$@" > err.log 2>&1; then fail "$what: accepted"; fi
  [[ $(grep -c '^error:' err.log) -eq 1 ]] && grep -q "$pattern" err.log || { cat err.log; fail "$what: not the expected error"; }
}
BASE=(--input_path in/items.csv --max_items_per_codebook 2 --output_path out)
expect_error "append onto nothing" "no manifest at 'out/v1/manifest.json'" "${BASE[@]}" --codebook 3,4,5 \
  --generation v2 --from_generation v1
expect_error "append onto itself" "from_generation and --generation are both 'v1'" "${BASE[@]}" --codebook 3,4,5 \
  --generation v1 --from_generation v1
expect_error "no generation" "generation is required unless --rate_only" "${BASE[@]}" --codebook 3,4,5
expect_error "output in the input's directory" "path conflict: 'in/items.csv' and 'in'" --input_path in/items.csv \
  --codebook 3,4,5 --max_items_per_codebook 2 --output_path in --generation v1
expect_error "codes beyond the codebook" "items.csv line 2: field 'codes': code 1 of layer 0 is outside its codebook \[0, 1)" \
  "${BASE[@]}" --codebook 1,4,5 --generation v1
expect_error "no candidate field" "columns \['cands'\] not found in input" "${BASE[@]}" --codebook 3,4,5 \
  --generation v1 --candidate_codes_field cands
expect_error "capacity 0" "capacity must be >= 1" --input_path in/items.csv --codebook 3,4,5 \
  --max_items_per_codebook 0 --rate_only
WORLD_SIZE=2 RANK=1 expect_error "two ranks" "resolve_sid_collisions is single-process" "${BASE[@]}" --codebook 3,4,5 \
  --generation v1
echo "resolve_sid_collisions: OK"
