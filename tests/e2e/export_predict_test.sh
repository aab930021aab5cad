#!/usr/bin/env bash
# `tzrec export` and `tzrec predict` end to end on the DeepFM example trained with a dense EMA:
#   - export (INT8 tables by default, QUANT_EMB=FP32, use_dense_ema on and off) writes the package;
#   - predict from the FP32 export without EMA equals predict from the checkpoint (Parquet vs CSV);
#   - the EMA export predicts the EMA model: the AUC of its predictions (sklearn, on the reserved
#     label column) equals what `tzrec eval` reports with the EMA weights;
#   - INT8 predictions stay close to FP32 ones; two ranks write part-0 / part-1 covering all rows;
#   - bad requests fail with one clear line.
set -euo pipefail
TZREC=$1
ROOT=$2
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT
fail() { echo "FAIL: $*"; exit 1; }
PY=/usr/bin/python3

"$TZREC" gen_data --output_dir "$WORK/data" --num_rows 6000 --num_eval_rows 1500 --seed 5 --format parquet 2> /dev/null
sed -e 's/num_epochs: [0-9]*/num_steps: 40/' \
    -e '/dense_optimizer {/,/constant_learning_rate/ s/    constant_learning_rate {/    ema { decay: 0.9 }\n    constant_learning_rate {/' \
    "$ROOT/examples/deepfm_criteo_synth.config" > "$WORK/ema.config"
grep -q 'ema { decay: 0.9 }' "$WORK/ema.config" || fail "could not add the EMA to the example config"
EDIT='{"train_input_path":"'$WORK'/data/train.parquet","eval_input_path":"'$WORK'/data/eval.parquet","data_config.batch_size":256}'
"$TZREC" train_eval --pipeline_config_path "$WORK/ema.config" --model_dir "$WORK/model" --edit_config_json "$EDIT" \
  2> "$WORK/train.log" || { cat "$WORK/train.log"; fail "train_eval"; }
CONFIG="$WORK/model/pipeline.config"
# The same config with export_config.use_dense_ema: false.
{ cat "$CONFIG"; echo 'export_config { use_dense_ema: false }'; } > "$WORK/no_ema.config"

"$TZREC" export --pipeline_config_path "$CONFIG" --export_dir "$WORK/export_int8" 2> "$WORK/export.log" \
  || { cat "$WORK/export.log"; fail "export"; }
for f in pipeline.config model.safetensors model_acc.json version fg.json; do
  [[ -f "$WORK/export_int8/$f" ]] || fail "export_int8/$f missing"
done
# The package's fg.json is the one create_fg_json writes for the config (TorchEasyRec's export_util).
"$TZREC" create_fg_json --pipeline_config_path "$CONFIG" --fg_output_dir "$WORK/fg" 2> /dev/null \
  || fail "create_fg_json"
cmp -s "$WORK/fg/fg.json" "$WORK/export_int8/fg.json" || fail "export_int8/fg.json differs from create_fg_json's"
grep -q '"QUANT_EMB": "INT8"' "$WORK/export_int8/model_acc.json" || fail "model_acc.json: $(cat "$WORK/export_int8/model_acc.json")"
grep -q 'with the dense EMA weights' "$WORK/export.log" || fail "export did not use the EMA weights: $(cat "$WORK/export.log")"
QUANT_EMB=FP32 "$TZREC" export --pipeline_config_path "$CONFIG" --export_dir "$WORK/export_fp32" 2> /dev/null \
  || fail "export FP32"
QUANT_EMB=FP32 "$TZREC" export --pipeline_config_path "$WORK/no_ema.config" --export_dir "$WORK/export_raw" \
  2> /dev/null || fail "export without EMA"

predict() {  # name, then flags
  local name=$1; shift
  "$TZREC" predict --predict_input_path "$WORK/data/eval.parquet" --predict_output_path "$WORK/$name" \
    --reserved_columns label "$@" 2> "$WORK/$name.log" || { cat "$WORK/$name.log"; fail "predict $name"; }
}
predict pred_int8 --scripted_model_path "$WORK/export_int8"
predict pred_fp32 --scripted_model_path "$WORK/export_fp32"
predict pred_raw --scripted_model_path "$WORK/export_raw"
predict pred_ckpt --pipeline_config_path "$CONFIG" --writer_type CsvWriter
"$TZREC" launch --nproc-per-node 2 --standalone -- predict --scripted_model_path "$WORK/export_fp32" \
  --predict_input_path "$WORK/data/eval.parquet" --predict_output_path "$WORK/pred_2ranks" \
  --output_columns probs > "$WORK/pred_2ranks.log" 2>&1 || { cat "$WORK/pred_2ranks.log"; fail "2-rank predict"; }

"$TZREC" eval --pipeline_config_path "$CONFIG" --model_dir "$WORK/model" > /dev/null 2> "$WORK/eval.log" \
  || { cat "$WORK/eval.log"; fail "eval"; }

TZREC="$TZREC" $PY - "$WORK" <<'PYEOF' || fail "prediction checks"
import csv, json, os, subprocess, sys
import numpy as np
from sklearn.metrics import roc_auc_score

work, tzrec = sys.argv[1], os.environ["TZREC"]

def parquet(path):
    out = subprocess.run([tzrec, "parquet_cat", path], capture_output=True, text=True, check=True).stdout
    rows = [json.loads(line) for line in out.splitlines() if line.strip()]
    return {k: np.array([r[k] for r in rows]) for k in rows[0]}

def check(cond, what):
    if not cond:
        print("FAIL:", what)
        sys.exit(1)

int8 = parquet(f"{work}/pred_int8/part-0.parquet")
fp32 = parquet(f"{work}/pred_fp32/part-0.parquet")
raw = parquet(f"{work}/pred_raw/part-0.parquet")
with open(f"{work}/pred_ckpt/part-0.csv") as f:
    ckpt = list(csv.DictReader(f))
check(list(fp32) == ["logits", "probs", "label"], f"columns {list(fp32)}")
check(len(fp32["probs"]) == 1500 and len(ckpt) == 1500, "row counts")
ckpt_probs = np.array([float(r["probs"]) for r in ckpt])
check(np.array_equal(np.array([float(r["label"]) for r in ckpt]), fp32["label"].astype(float)), "reserved labels differ")
d = np.abs(raw["probs"] - ckpt_probs).max()
check(d < 1e-6, f"export without EMA vs checkpoint predict: max diff {d}")
d = np.abs(fp32["probs"] - raw["probs"]).max()
check(d > 1e-4, f"EMA export predicts like the raw weights (max diff {d})")
d = np.abs(int8["probs"] - fp32["probs"]).max()
check(0 < d < 0.02, f"INT8 vs FP32 tables: max diff {d}")
check(np.allclose(1 / (1 + np.exp(-fp32["logits"])), fp32["probs"], atol=1e-6), "probs != sigmoid(logits)")

auc = roc_auc_score(fp32["label"], fp32["probs"])
with open(f"{work}/model/eval_result.txt") as f:
    reported = json.loads(f.readline())["auc"]
check(abs(auc - reported) < 1e-4, f"AUC of the EMA export's predictions {auc} vs tzrec eval with EMA {reported}")

parts = [parquet(f"{work}/pred_2ranks/part-{r}.parquet") for r in (0, 1)]
check(all(list(p) == ["probs"] for p in parts), "2-rank output columns")
both = np.concatenate([p["probs"] for p in parts])
check(len(both) == 1500 and min(len(p["probs"]) for p in parts) > 0, "2-rank row split")
check(np.allclose(np.sort(both), np.sort(fp32["probs"]), atol=1e-6), "2-rank predictions differ")
print(f"auc {auc:.4f} (eval {reported:.4f}); INT8 max diff {np.abs(int8['probs'] - fp32['probs']).max():.2e}")
PYEOF

# Bad requests: one line, non-zero exit.
expect_error() {  # pattern, then the command
  local pattern=$1; shift
  if "$@" > "$WORK/err.out" 2> "$WORK/err.log"; then fail "expected failure: $*"; fi
  grep -q -- "$pattern" "$WORK/err.log" || { cat "$WORK/err.log"; fail "message should contain '$pattern'"; }
}
expect_error "already exists" "$TZREC" export --pipeline_config_path "$CONFIG" --export_dir "$WORK/export_int8"
expect_error "not supported yet: QUANT_EMB=INT4" env QUANT_EMB=INT4 "$TZREC" export --pipeline_config_path "$CONFIG" \
  --export_dir "$WORK/x"
expect_error "not an export directory" "$TZREC" predict --scripted_model_path "$WORK/model" \
  --predict_input_path "$WORK/data/eval.parquet" --predict_output_path "$WORK/x"
expect_error "has no output 'score'" "$TZREC" predict --scripted_model_path "$WORK/export_fp32" \
  --predict_input_path "$WORK/data/eval.parquet" --predict_output_path "$WORK/x" --output_columns score
[[ ! -e "$WORK/x" ]] || fail "a failed export / predict left $WORK/x"
echo OK
