#!/usr/bin/env bash
# The semantic-ID models end to end on TorchEasyRec's own SID configs (tests/configs/torcheasyrec/
# sid_rqvae_mock.config, sid_rqvae_contrastive_mock.config and sid_rqkmeans_mock.config, copied
# unchanged; their data from `tzrec gen_data --pipeline_config_path`):
#   - train_eval reports mse, rel_loss and unique_sid_ratio; sid_rqkmeans fits its codebook once
#     after training and its only checkpoint holds it, also when trained by num_steps (the last
#     step's checkpoint comes after the fit) and when a periodic save falls on the last step (the
#     step is saved again with the codebook); `tzrec eval` of the checkpoint reports the same;
#   - export → predict writes each item's "codes" as list<int64>, one code per layer within its
#     codebook; predicting from the checkpoint gives the same codes; sid_rqkmeans' codes equal a
#     numpy residual nearest-centroid walk over the exported centroids; candidate SIDs through
#     predict's --edit_config_json;
#   - `tzrec evaluate_sid_quality` on the predictions (and on a CSV comparing them with resolved
#     codes) writes the metrics numpy computes; `tzrec resolve_sid_collisions` moves items only to
#     their own candidates;
#   - sid_rqvae_contrastive_mock trains on 2 ranks (`tzrec launch`: Sinkhorn sums over the ranks,
#     rank 0's k-means codebooks broadcast, the contrastive targets of both ranks) and exports;
#   - bad configs and runs fail with one line naming the field.
set -euo pipefail
TZREC=$1
ROOT=$2
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT
fail() { echo "FAIL: $*"; exit 1; }
PY=/usr/bin/python3
CONFIGS="$ROOT/tests/configs/torcheasyrec"
cd "$WORK"

# The last line of a result file: mse, rel_loss and unique_sid_ratio present and finite.
check_metrics() {
  $PY - "$1" <<'PY' || fail "$1: SID metrics missing or not finite"
import json, math, sys
line = [l for l in open(sys.argv[1]) if l.strip()][-1]
m = json.loads(line)
for k in ("mse", "rel_loss", "unique_sid_ratio"):
    assert isinstance(m.get(k), float) and math.isfinite(m[k]), (k, m)
assert m["unique_sid_ratio"] > 0, m
PY
}

# Predictions of a SID model: every row's codes are 3 ints within the codebooks (16 codes each).
check_codes() {
  grep -q "codes.list.element: INT64" <<< "$("$TZREC" parquet_meta "$1")" || fail "$1: codes are not list<int64>"
  "$TZREC" parquet_cat "$1" > "$1.json"
  $PY - "$1.json" "$2" <<'PY' || fail "$1: bad codes"
import json, sys
rows = [json.loads(l) for l in open(sys.argv[1])]
assert len(rows) == int(sys.argv[2]), len(rows)
for r in rows:
    c = r["codes"]
    assert len(c) == 3 and all(isinstance(v, int) and 0 <= v < 16 for v in c), r
PY
}

for name in sid_rqvae_mock sid_rqvae_contrastive_mock sid_rqkmeans_mock; do
  W="$WORK/$name"
  "$TZREC" gen_data --pipeline_config_path "$CONFIGS/$name.config" --output_dir "$W/data" --num_rows 3000 \
    --num_eval_rows 600 2> "$W.gen.log" || { cat "$W.gen.log"; fail "$name: gen_data"; }
  "$TZREC" check_config --pipeline_config_path "$W/data/pipeline.config" > "$W.check" 2>&1 \
    || { cat "$W.check"; fail "$name: check_config"; }
  "$TZREC" train_eval --pipeline_config_path "$W/data/pipeline.config" --model_dir "$W/model" 2> "$W.train.log" \
    || { tail -5 "$W.train.log"; fail "$name: train_eval"; }
  check_metrics "$W/model/train_eval_result_v2.txt"
  "$TZREC" export --pipeline_config_path "$W/model/pipeline.config" --export_dir "$W/export" 2> "$W.export.log" \
    || { tail -5 "$W.export.log"; fail "$name: export"; }
  "$TZREC" predict --scripted_model_path "$W/export" --predict_input_path "$W/data/eval.parquet" \
    --predict_output_path "$W/pred" --reserved_columns embedding 2> "$W.predict.log" \
    || { tail -5 "$W.predict.log"; fail "$name: predict"; }
  check_codes "$W/pred/part-0.parquet" 600
  "$TZREC" predict --pipeline_config_path "$W/model/pipeline.config" --predict_input_path "$W/data/eval.parquet" \
    --predict_output_path "$W/pred_ckpt" 2> "$W.predict_ckpt.log" \
    || { tail -5 "$W.predict_ckpt.log"; fail "$name: predict from the checkpoint"; }
  check_codes "$W/pred_ckpt/part-0.parquet" 600
  $PY - "$W/pred/part-0.parquet.json" "$W/pred_ckpt/part-0.parquet.json" <<'PY' || fail "$name: export and checkpoint codes differ"
import json, sys
a = [json.loads(l)["codes"] for l in open(sys.argv[1])]
b = [json.loads(l)["codes"] for l in open(sys.argv[2])]
assert a == b
PY
  "$TZREC" eval --pipeline_config_path "$W/model/pipeline.config" 2> "$W.eval.log" \
    || { tail -5 "$W.eval.log"; fail "$name: eval"; }
  $PY - "$W/model/train_eval_result_v2.txt" "$W/model/eval_result.txt" <<'PY' || fail "$name: eval differs from train_eval"
import json, sys
a = json.loads([l for l in open(sys.argv[1]) if l.strip()][-1])
b = json.loads(open(sys.argv[2]).read())
assert a["global_step"] == b["global_step"], (a, b)
for k in ("mse", "rel_loss", "unique_sid_ratio"):
    assert abs(a[k] - b[k]) <= 1e-6 * max(1.0, abs(a[k])), (k, a, b)
PY
  echo "$name: trained, evaluated, exported and predicted"
done

# evaluate_sid_quality on what predict wrote (sid_rqvae_mock, Parquet list<int64>), then on a CSV
# of the same codes as "origin" next to a "codes" field where Python moved every collision to a
# free last-layer code, with a malformed and an out-of-range row: each written metric equals numpy's
# computation from the definitions (TorchEasyRec's tzrec/utils/sid/quality.py).
Q="$WORK/sid_quality"
mkdir -p "$Q"
"$TZREC" evaluate_sid_quality --input_path "$WORK/sid_rqvae_mock/pred/part-0.parquet" --codebook 16,16,16 \
  --summary_output "$Q/summary" --layer_stats_output "$Q/layers" --log_top_sids 3 2> "$Q.log" \
  || { cat "$Q.log"; fail "evaluate_sid_quality"; }
grep -q "top SIDs by frequency (single) = \[('" "$Q.log" || { cat "$Q.log"; fail "evaluate_sid_quality: no top SIDs logged"; }
"$TZREC" parquet_cat "$Q/summary/part-0.parquet" > "$Q/summary.json"
"$TZREC" parquet_cat "$Q/layers/part-0.parquet" > "$Q/layers.json"
$PY - "$WORK/sid_rqvae_mock/pred/part-0.parquet.json" "$Q" <<'PY' || fail "evaluate_sid_quality: metrics differ from numpy"
import json, math, sys
import numpy as np
codes = np.array([json.loads(l)["codes"] for l in open(sys.argv[1])], dtype=np.int64)
q = sys.argv[2]

def expected(c, size=16, layers=3):
    _, counts = np.unique(c, axis=0, return_counts=True)
    n, total = len(counts), counts.sum()
    s = np.sort(counts)
    gini = (n + 1) / n - 2 * float((s * np.arange(n, 0, -1)).sum()) / (n * total)
    p = counts / total
    h = float(-(p * np.log(p)).sum())
    out = dict(total=int(total), unique_sid=n, no_collision_rate=n / total,
               uniquely_identified_item_rate=float((counts == 1).sum()) / total, max_collision=int(counts.max()),
               gini=gini, entropy=h, max_entropy=math.log(size ** layers), entropy_ratio=h / math.log(size ** layers))
    per_layer = []
    for l in range(layers):
        use = np.bincount(c[:, l], minlength=size)
        pl = use[use > 0] / use.sum()
        per_layer.append(dict(layer=l, codebook_size=size, coverage=(use > 0).sum() / size,
                              dead_codes=int((use == 0).sum()), perplexity=math.exp(float(-(pl * np.log(pl)).sum()))))
    return out, per_layer

def close(a, b):
    return abs(a - b) <= 1e-9 * max(1.0, abs(b))

summary = [json.loads(l) for l in open(q + "/summary.json")]
layers = [json.loads(l) for l in open(q + "/layers.json")]
want, want_layers = expected(codes)
assert len(summary) == 1 and summary[0]["view"] == "single" and summary[0]["codebook"] == "16,16,16", summary
assert summary[0]["input_rows"] == 600 and summary[0]["invalid_pair_rows"] == 0, summary
for k, v in want.items():
    assert close(summary[0][k], v), (k, summary[0][k], v)
assert [r["layer"] for r in layers] == [0, 1, 2], layers
for got, w in zip(layers, want_layers):
    for k, v in w.items():
        assert close(got[k], v), (k, got[k], v)

# The CSV: origin = the predicted codes; codes = each repeated SID after its first moved to a free
# last-layer code (in row order); then a malformed row and an out-of-range one.
seen, moved = set(), []
for c in codes.tolist():
    t = tuple(c)
    if t in seen:
        for alt in range(16):
            if (t[0], t[1], alt) not in seen:
                t = (t[0], t[1], alt)
                break
    seen.add(t)
    moved.append(t)
with open(q + "/items.csv", "w") as f:
    f.write("item_id,origin,codes\n")
    for i, (a, b) in enumerate(zip(codes.tolist(), moved)):
        f.write('%d,"%s","%s"\n' % (i, ",".join(map(str, a)), ",".join(map(str, b))))
    f.write('600,"1,2","1,2,3"\n')
    f.write('601,"1,2,3","1,2,16"\n')
np.save(q + "/moved.npy", np.array(moved, dtype=np.int64))
PY
mkdir -p "$Q/csv_in"
mv "$Q/items.csv" "$Q/csv_in/"
"$TZREC" evaluate_sid_quality --input_path "$Q/csv_in/items.csv" --codebook 16,16,16 --origin_codes_field origin \
  --summary_output "$Q/csv_summary" 2> "$Q.csv.log" || { cat "$Q.csv.log"; fail "evaluate_sid_quality on CSV"; }
grep -q "skipped 2 invalid rows (before: 1 malformed, 0 out-of-range; after: 0 malformed, 1 out-of-range)" "$Q.csv.log" \
  || { cat "$Q.csv.log"; fail "evaluate_sid_quality: invalid rows not counted"; }
$PY - "$WORK/sid_rqvae_mock/pred/part-0.parquet.json" "$Q" <<'PY' || fail "evaluate_sid_quality: CSV views differ from numpy"
import csv, json, sys
import numpy as np
q = sys.argv[2]
rows = list(csv.DictReader(open(q + "/csv_summary/part-0.csv")))
assert [r["view"] for r in rows] == ["before", "after", "delta"], rows
assert rows[2]["sid_field"] == "origin->codes" and rows[0]["input_rows"] == "602" and rows[0]["invalid_pair_rows"] == "2"
before = np.array([json.loads(l)["codes"] for l in open(sys.argv[1])])
after = np.load(q + "/moved.npy")
ub, ua = len(np.unique(before, axis=0)), len(np.unique(after, axis=0))
assert int(rows[0]["unique_sid"]) == ub and int(rows[1]["unique_sid"]) == ua, (rows, ub, ua)
assert int(rows[2]["unique_sid"]) == ua - ub, rows
assert abs(float(rows[2]["no_collision_rate"]) - (ua - ub) / 600) < 1e-12, rows
PY
if "$TZREC" evaluate_sid_quality --input_path "$Q/csv_in/items.csv" --codebook 16,16,16 --invalid_row_policy error \
     > "$Q.err.log" 2>&1; then
  fail "evaluate_sid_quality: an out-of-range row passed --invalid_row_policy error"
fi
grep -q "^error: .*items.csv line 603: field 'codes': code 16 of layer 2 is outside its codebook \[0, 16)" "$Q.err.log" \
  || { cat "$Q.err.log"; fail "evaluate_sid_quality: not the expected error"; }
echo "evaluate_sid_quality: metrics equal numpy's"

# sid_rqkmeans: one checkpoint (no periodic saves), written after the fit; the codes are a plain
# residual nearest-centroid walk over the exported centroids.
K="$WORK/sid_rqkmeans_mock"
[[ $(ls -d "$K"/model/model.ckpt-* | wc -l) -eq 1 ]] || fail "sid_rqkmeans: expected one checkpoint"
grep -q "fitting the codebook by k-means on 3000 sampled rows" "$K.train.log" || fail "sid_rqkmeans: no fit logged"
$PY - "$K/export/model.safetensors" "$K/pred/part-0.parquet.json" "$K/model/train_eval_result_v2.txt" <<'PY' \
  || fail "sid_rqkmeans: codes differ from the nearest-centroid walk"
import json, struct, sys
import numpy as np
raw = open(sys.argv[1], "rb").read()
n = struct.unpack("<Q", raw[:8])[0]
header = json.loads(raw[8:8 + n])
def tensor(name):
    e = header[name]
    a, b = e["data_offsets"]
    dtype = {"F32": np.float32, "BOOL": np.bool_}[e["dtype"]]
    return np.frombuffer(raw[8 + n + a:8 + n + b], dtype=dtype).reshape(e["shape"])
books = [tensor("_quantizer.layers.%d.centroids" % i) for i in range(3)]
assert all(bool(tensor("_quantizer.layers.%d._is_initialized" % i)) for i in range(3))
assert all(np.abs(b).sum() > 0 for b in books)
rows = [json.loads(l) for l in open(sys.argv[2])]
x = np.array([r["embedding"] for r in rows], dtype=np.float32)
codes = []
res = x.copy()
for b in books:
    d = ((res[:, None, :] - b[None, :, :]) ** 2).sum(-1)
    ids = d.argmin(1)
    codes.append(ids)
    res = res - b[ids]
codes = np.stack(codes, 1)
got = np.array([r["codes"] for r in rows])
agree = (codes == got).all(1).mean()
assert agree >= 0.995, agree  # float32 near-ties may go either way
m = json.loads([l for l in open(sys.argv[3]) if l.strip()][-1])
assert m["rel_loss"] < 1.0, m  # better than reconstructing nothing
PY

# A periodic save on the last step of an epoch run (3000 rows in batches of 256: steps 0..11) comes
# before the fit: that step is saved again, with the codebook, and evaluated again.
sed 's/save_checkpoints_steps: 0/save_checkpoints_steps: 11/' "$K/data/pipeline.config" > "$K/s11.config"
"$TZREC" train_eval --pipeline_config_path "$K/s11.config" --model_dir "$K/s11" 2> "$K.s11.log" \
  || { tail -5 "$K.s11.log"; fail "sid_rqkmeans with save_checkpoints_steps 11"; }
[[ $(grep -c 'saved checkpoint .*model.ckpt-11$' "$K.s11.log") -eq 2 ]] || fail "step 11 not saved again after the fit"
$PY - "$K/s11/model.ckpt-11/model.safetensors" "$K/s11/train_eval_result_v2.txt" <<'PY' \
  || fail "the final checkpoint of step 11 lacks the fitted codebook"
import json, math, struct, sys
import numpy as np
raw = open(sys.argv[1], "rb").read()
n = struct.unpack("<Q", raw[:8])[0]
header = json.loads(raw[8:8 + n])
e = header["_quantizer.layers.2.centroids"]
a, b = e["data_offsets"]
assert np.abs(np.frombuffer(raw[8 + n + a:8 + n + b], dtype=np.float32)).sum() > 0
lines = [json.loads(l) for l in open(sys.argv[2]) if l.strip()]
assert [l["global_step"] for l in lines] == [11, 11], lines
assert lines[0]["mse"] is None and math.isfinite(lines[1]["mse"]), lines  # before / after the fit
PY

# Trained by num_steps the last step is saved inside the loop: the fit comes before that save.
sed 's/num_epochs: [0-9]*/num_steps: 5/' "$K/data/pipeline.config" > "$K/steps.config"
"$TZREC" train_eval --pipeline_config_path "$K/steps.config" --model_dir "$K/steps" 2> "$K.steps.log" \
  || { tail -5 "$K.steps.log"; fail "sid_rqkmeans by num_steps"; }
[[ $(grep -c global_step "$K/steps/train_eval_result_v2.txt") -eq 1 ]] || fail "sid_rqkmeans by num_steps: not one evaluation"
grep -q '"global_step":4' "$K/steps/train_eval_result_v2.txt" || fail "sid_rqkmeans by num_steps: wrong step"
check_metrics "$K/steps/train_eval_result_v2.txt"

# Candidate SIDs (TorchEasyRec's candidate_output_config) at predict time.
R="$WORK/sid_rqvae_mock"
"$TZREC" predict --scripted_model_path "$R/export" --predict_input_path "$R/data/eval.parquet" \
  --predict_output_path "$R/cand" --edit_config_json \
  '{"model_config.sid_rqvae.candidate_output_config.enabled":true,"model_config.sid_rqvae.candidate_output_config.topk":4}' \
  2> "$R.cand.log" || { tail -5 "$R.cand.log"; fail "predict with candidates"; }
"$TZREC" parquet_cat "$R/cand/part-0.parquet" > "$R/cand.json"
$PY - "$R/cand.json" <<'PY' || fail "candidate SIDs"
import json, sys
for l in open(sys.argv[1]):
    r = json.loads(l)
    c, s = r["candidate_codes"], r["candidate_scores"]
    assert len(c) == 12 and len(s) == 4, r
    assert c[:3] == r["codes"], r                                    # slot 0: the SID
    assert all(c[3 * k:3 * k + 2] == r["codes"][:2] for k in range(4)), r  # the greedy prefix
    assert s == sorted(s), r
PY

# The model's candidates through resolve_sid_collisions (capacity 1; ids are the row numbers, the
# table as CSV): every item keeps its band and takes its own last code or one of its candidates'.
mkdir -p "$R/resolve_in"
$PY - "$R/cand.json" "$R/resolve_in/items.csv" <<'PY'
import json, sys
with open(sys.argv[2], "w") as f:
    f.write("item_id,codes,candidate_codes\n")
    for i, l in enumerate(open(sys.argv[1])):
        r = json.loads(l)
        f.write('%d,"%s","%s"\n' % (i, ",".join(map(str, r["codes"])), ",".join(map(str, r["candidate_codes"]))))
PY
"$TZREC" resolve_sid_collisions --input_path "$R/resolve_in/items.csv" --codebook 16,16,16 --max_items_per_codebook 1 \
  --output_path "$R/bundle" --generation v1 2> "$R.resolve.log" || { tail -5 "$R.resolve.log"; fail "resolve_sid_collisions"; }
$PY - "$R/cand.json" "$R/bundle/v1/item_to_sid/part-0.csv" "$R.resolve.log" <<'PY' || fail "resolve_sid_collisions of the candidates"
import csv, json, re, sys
cands = [json.loads(l) for l in open(sys.argv[1])]
out = list(csv.DictReader(open(sys.argv[2])))
assert len(out) == len(cands) == 600
before, after, moved = {}, {}, 0
for r, o in zip(cands, out):
    final = [int(x) for x in o["codebook"].split(",")]
    assert final[:2] == r["codes"][:2], (r, o)
    assert final[2] == r["codes"][2] or final[2] in r["candidate_codes"][2::3], (r, o)
    moved += final != r["codes"]
    before[tuple(r["codes"])] = before.get(tuple(r["codes"]), 0) + 1
    after[tuple(final)] = after.get(tuple(final), 0) + 1
stats = dict(re.findall(r"(\w+)=(\d+)", [l for l in open(sys.argv[3]) if "resolution finished" in l][0]))
assert int(stats["relocated_count"]) == moved, (stats, moved)
assert int(stats["raw_collision_buckets"]) == sum(c > 1 for c in before.values()), stats
assert int(stats["final_collision_buckets"]) == sum(c > 1 for c in after.values()), stats
PY

# sid_rqvae on 2 ranks: trains (the collectives of both ranks match), reports its metrics, exports.
C="$WORK/sid_rqvae_contrastive_mock"
"$TZREC" launch --nproc-per-node 2 --standalone -- train_eval --pipeline_config_path "$C/data/pipeline.config" \
  --model_dir "$WORK/two_ranks" > "$WORK/two_ranks.log" 2>&1 || { tail -5 "$WORK/two_ranks.log"; fail "sid_rqvae on 2 ranks"; }
check_metrics "$WORK/two_ranks/train_eval_result_v2.txt"
"$TZREC" export --pipeline_config_path "$WORK/two_ranks/pipeline.config" --export_dir "$WORK/two_ranks_export" \
  2> "$WORK/two_ranks_export.log" || { tail -5 "$WORK/two_ranks_export.log"; fail "export of the 2-rank sid_rqvae"; }

# Bad configs and runs: one line naming the field.
sed 's/recon_type: "l2"/recon_type: "l3"/' "$R/data/pipeline.config" > "$WORK/bad_recon.config"
if "$TZREC" check_config --pipeline_config_path "$WORK/bad_recon.config" > "$WORK/bad.log" 2>&1; then
  fail "recon_type l3 accepted"
fi
grep -q 'model_config.losses\[0\].recon_loss.recon_type: "l3" is not a distance' "$WORK/bad.log" \
  || { cat "$WORK/bad.log"; fail "bad recon_type: not the expected error"; }
sed 's/codebook: 16/codebook: 0/' "$K/data/pipeline.config" > "$WORK/bad_codebook.config"
if "$TZREC" check_config --pipeline_config_path "$WORK/bad_codebook.config" > "$WORK/bad.log" 2>&1; then
  fail "codebook 0 accepted"
fi
grep -q 'model_config.sid_rqkmeans.codebook\[0\]: must be >= 1' "$WORK/bad.log" \
  || { cat "$WORK/bad.log"; fail "codebook 0: not the expected error"; }
if WORLD_SIZE=2 RANK=0 MASTER_ADDR=127.0.0.1 MASTER_PORT=29511 "$TZREC" check_config \
     --pipeline_config_path "$K/data/pipeline.config" > "$WORK/bad.log" 2>&1; then
  fail "sid_rqkmeans accepted with WORLD_SIZE=2"
fi
grep -q 'model_config.sid_rqkmeans: fits its codebook in one process' "$WORK/bad.log" \
  || { cat "$WORK/bad.log"; fail "WORLD_SIZE=2: not the expected error"; }
"$TZREC" gen_data --pipeline_config_path "$CONFIGS/sid_rqkmeans_mock.config" --output_dir "$WORK/tiny" --num_rows 10 \
  --num_eval_rows 10 2> /dev/null
if "$TZREC" train_eval --pipeline_config_path "$WORK/tiny/pipeline.config" --model_dir "$WORK/tiny_model" \
     > "$WORK/bad.log" 2>&1; then
  fail "a 16-code codebook fitted on 10 rows"
fi
[[ $(grep -c '^error:' "$WORK/bad.log") -eq 1 ]] && grep -q '^error: .*needs at least 16 rows' "$WORK/bad.log" \
  || { tail -3 "$WORK/bad.log"; fail "too few rows: not the expected error"; }
echo "sid models: OK"
