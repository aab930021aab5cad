#!/usr/bin/env bash
# `tzrec hitrate` against a brute-force numpy computation of the same hit rates (every item scored,
# stable ranking, TorchEasyRec's per-request and total hitrate): inner product and squared L2,
# one and two interests per request (text embeddings with ';' between interests), per-interest
# and across-interest top K; then bad input gives one error line naming the file, row and column.
# Usage: hitrate_test.sh <tzrec binary> <repo root>
set -euo pipefail
TZREC=$1
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT
fail() { echo "FAIL: $*"; exit 1; }
cd "$WORK"

# Tables and expected totals: expected.txt lines "<interests> <index_type> <across> <hitrate>".
/usr/bin/python3 - <<'PY'
import numpy as np
rng = np.random.default_rng(7)
N, D, U, K = 2000, 6, 150, 15
# Small integer embeddings: every score is exact in float32 on both sides, and many tie (ties rank
# the earlier item first on both sides).
def fmt(v):
    return ",".join("%d" % x for x in v)
items = rng.integers(-4, 5, (N, D)).astype(np.float64)
with open("items.csv", "w") as f:
    f.write("item_id,item_tower_emb\n")
    for i in range(N):
        f.write('i%d,"%s"\n' % (i, fmt(items[i])))
gts = [set("i%d" % g for g in rng.choice(N, size=rng.integers(0, 6), replace=False)) for _ in range(U)]
def scores(q, metric):
    return q @ items.T if metric == "IVFFlatIP" else ((q[:, None, :] - items[None, :, :]) ** 2).sum(-1)
def ranked(s, metric):
    return np.argsort(-s if metric == "IVFFlatIP" else s, axis=-1, kind="stable")
out = []
for interests in (1, 2):
    users = rng.integers(-4, 5, (U, interests, D)).astype(np.float64)
    users[3] = 0  # an all-zero request
    with open("users%d.csv" % interests, "w") as f:
        f.write("request_id,gt_items,user_tower_emb\n")
        for u in range(U):
            f.write('%d,"%s","%s"\n' % (u, ",".join(sorted(gts[u])), ";".join(fmt(v) for v in users[u])))
    for metric in ("IVFFlatIP", "IVFFlatL2"):
        for across in ((False, True) if interests == 2 else (False,)):
            hits = total = 0
            for u in range(U):
                if not gts[u]:
                    continue
                s = scores(users[u], metric)  # [I, N]
                if across:
                    cands = []
                    for i in range(interests):
                        if not users[u][i].any():
                            continue
                        cands += [(s[i][j], j) for j in range(N)]
                    cands.sort(key=lambda c: ((-c[0] if metric == "IVFFlatIP" else c[0]), c[1]))
                    seen, top = set(), []
                    for _, j in cands:
                        if j not in seen:
                            seen.add(j); top.append(j)
                        if len(top) == K:
                            break
                    recalled = set("i%d" % j for j in top)
                else:
                    recalled = set("i%d" % j for i in range(interests) for j in ranked(s[i], metric)[:K])
                hits += len(recalled & gts[u]); total += len(gts[u])
            out.append("%d %s %d %.12f" % (interests, metric, across, hits / total))
open("expected.txt", "w").write("\n".join(out) + "\n")
PY

while read -r interests metric across want; do
  flags=(--user_gt_input "users$interests.csv" --item_embedding_input items.csv --top_k 15 --index_type "$metric"
         --num_interests "$interests" --batch_size 32 --total_hitrate_output "tot_$interests$metric$across"
         --hitrate_details_output "det_$interests$metric$across")
  [[ $across == 1 ]] && flags+=(--topk_across_interests)
  "$TZREC" hitrate "${flags[@]}" 2> "run.log" || { cat run.log; fail "hitrate $interests $metric $across"; }
  got=$("$TZREC" parquet_cat "tot_$interests$metric$across/part-0.parquet" | sed 's/.*"hitrate":\([0-9.e-]*\).*/\1/')
  /usr/bin/python3 -c "import sys; sys.exit(0 if abs($got - $want) < 1e-9 else 1)" \
    || fail "interests $interests $metric across=$across: hitrate $got, brute force $want"
  # One detail row per request with ground truth; the skipped ones were warned about.
  rows=$("$TZREC" parquet_meta "det_$interests$metric$across/part-0.parquet" | sed -n 's/^rows: //p')
  skipped=$(grep -c "has no ground-truth item; skipped" run.log || true)
  [[ $((rows + skipped)) -eq 150 ]] || fail "details: $rows rows + $skipped skipped != 150 requests"
  echo "hitrate interests=$interests $metric across=$across: $got (brute force $want)"
done < expected.txt

# Bad input: one error line naming the file, row and column.
printf 'request_id,gt_items,user_tower_emb\n0,i1,"1,2,x,4,5,6"\n' > bad.csv
if "$TZREC" hitrate --user_gt_input bad.csv --item_embedding_input items.csv 2> bad.log; then fail "bad number accepted"; fi
grep -q "^error: bad.csv line 2 column user_tower_emb: 'x' is not a number" bad.log || { cat bad.log; fail "bad number message"; }
printf 'request_id,gt_items,user_tower_emb\n0,i1,"1,2,3"\n' > short.csv
if "$TZREC" hitrate --user_gt_input short.csv --item_embedding_input items.csv 2> short.log; then fail "short vector accepted"; fi
grep -q "^error: short.csv line 2 column user_tower_emb: 3 embedding values, expected 1 vector(s) of width 6" short.log \
  || { cat short.log; fail "short vector message"; }
if "$TZREC" hitrate --user_gt_input users1.csv --item_embedding_input items.csv --item_id_field id 2> col.log; then
  fail "missing column accepted"
fi
grep -q "^error: .*'id'" col.log || { cat col.log; fail "missing column message"; }
echo "hitrate_test: OK"
