#!/usr/bin/env bash
# Dense embeddings (autodis / mlp, docs/tzrec-compatibility.md §5.11) end to end on
# tests/configs/gen_data/dense_embedding.config: train_eval saves their parameters under
# TorchEasyRec's state-dict names and shapes; eval restores them (the same AUC as train_eval's
# last evaluation); export writes them unchanged; predict from the (FP32) export equals predict from
# the checkpoint; two ranks train them in step (1-process eval of the 2-rank checkpoint = the
# 2-rank evaluation).
set -euo pipefail
TZREC=$1
ROOT=$2
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT
fail() { echo "FAIL: $*"; exit 1; }
PY=/usr/bin/python3

"$TZREC" gen_data --pipeline_config_path "$ROOT/tests/configs/gen_data/dense_embedding.config" \
  --output_dir "$WORK/data" --num_rows 2048 --num_eval_rows 512 2> "$WORK/gen.log" || { cat "$WORK/gen.log"; fail "gen_data"; }
sed 's/num_epochs: [0-9]*/num_steps: 30/' "$WORK/data/pipeline.config" > "$WORK/run.config"
"$TZREC" train_eval --pipeline_config_path "$WORK/run.config" --model_dir "$WORK/model" \
  --edit_config_json '{"data_config.batch_size":64}' 2> "$WORK/train.log" || { tail -5 "$WORK/train.log"; fail "train_eval"; }
CONFIG="$WORK/model/pipeline.config"
CKPT=$(ls -d "$WORK"/model/model.ckpt-* | sort -t- -k2 -n | tail -1)
"$TZREC" eval --pipeline_config_path "$CONFIG" --model_dir "$WORK/model" > /dev/null 2> "$WORK/eval.log" \
  || { tail -5 "$WORK/eval.log"; fail "eval"; }
# FP32 tables (QUANT_EMB), so that predictions from the export equal those from the checkpoint.
QUANT_EMB=FP32 "$TZREC" export --pipeline_config_path "$CONFIG" --export_dir "$WORK/export" 2> "$WORK/export.log" \
  || { tail -5 "$WORK/export.log"; fail "export"; }
predict() {  # name, then flags
  local name=$1; shift
  "$TZREC" predict --predict_input_path "$WORK/data/eval.parquet" --predict_output_path "$WORK/$name" \
    --output_columns probs "$@" 2> "$WORK/$name.log" || { tail -5 "$WORK/$name.log"; fail "predict $name"; }
}
predict pred_export --scripted_model_path "$WORK/export"
predict pred_ckpt --pipeline_config_path "$CONFIG"

TZREC="$TZREC" $PY - "$WORK" "$CKPT" <<'PYEOF' || fail "checks"
import json, os, re, struct, subprocess, sys
import numpy as np

work, ckpt, tzrec = sys.argv[1], sys.argv[2], os.environ["TZREC"]

def check(cond, what):
    if not cond:
        print("FAIL:", what)
        sys.exit(1)

def safetensors(path):
    blob = open(path, "rb").read()
    (n,) = struct.unpack("<Q", blob[:8])
    header = json.loads(blob[8:8 + n])
    out = {}
    for name, info in header.items():
        if name == "__metadata__":
            continue
        check(info["dtype"] == "F32", f"{name}: dtype {info['dtype']}")
        b, e = info["data_offsets"]
        out[name] = np.frombuffer(blob[8 + n + b:8 + n + e], dtype=np.float32).reshape(info["shape"])
    return out

# TorchEasyRec's names: one module per group key over both towers' features (sorted), the
# parameters split per feature.
pre = "embedding_group.emb_impls.__BASE__.dense_ec.dense_embs."
want = {}
for f in ["age", "price"]:
    k = pre + "autodis#8#3#0_800000#0_100000."
    want.update({k + f"meta_emb_{f}.weight": [3, 8], k + f"proj_w_{f}.weight": [3], k + f"proj_m_{f}.weight": [3, 3]})
k = pre + "autodis#4#4#0_500000#0_500000."
want.update({k + "meta_emb_age_gap.weight": [4, 4], k + "proj_w_age_gap.weight": [4], k + "proj_m_age_gap.weight": [4, 4]})
for f in ["cate_ctr", "ctr"]:
    want[pre + f"mlp#8.proj_w_{f}.weight"] = [8]
want[pre + "mlp#8#vdim#4#feature_name#            pic_emb.proj_w_pic_emb.weight"] = [4, 8]

model = safetensors(os.path.join(ckpt, "model.safetensors"))
got = {k: list(v.shape) for k, v in model.items() if ".dense_ec." in k}
check(got == want, f"checkpoint dense_ec tensors: {sorted(got.items())}")
# The towers see the embeddings' widths: user 8 + 8 + 8 + 8, item 8 + 8 + 1 + 8 + 8 + 4 + 8.
widths = {m.group(1): v.shape[1] for k, v in model.items()
          for m in [re.fullmatch(r"towers\.(\w+)\.mlp\.0\.perceptron\.0\.weight", k)] if m}
check(widths == {"user": 32, "item": 45}, f"tower input widths {widths}")

# Export writes the same values.
exported = safetensors(os.path.join(work, "export", "model.safetensors"))
for name in want:
    check(name in exported and np.array_equal(exported[name], model[name]), f"export: {name}")

# Predictions from the export equal those from the checkpoint.
def probs(path):
    out = subprocess.run([tzrec, "parquet_cat", path], capture_output=True, text=True, check=True).stdout
    return np.array([json.loads(l)["probs"] for l in out.splitlines() if l.strip()])
a = probs(os.path.join(work, "pred_export", "part-0.parquet"))
b = probs(os.path.join(work, "pred_ckpt", "part-0.parquet"))
check(len(a) == 512 and np.allclose(a, b, rtol=1e-6, atol=1e-7), "export vs checkpoint predictions")
PYEOF

# eval restores the checkpoint: the AUC train_eval recorded for its last evaluation.
auc() { tail -1 "$1" | $PY -c 'import json,sys; print(json.load(sys.stdin)["auc"])'; }
[[ -s "$WORK/model/eval_result.txt" ]] || fail "no eval_result.txt"
auc_train=$(auc "$WORK/model/train_eval_result_v2.txt")
auc_eval=$(auc "$WORK/model/eval_result.txt")
$PY -c "import sys; sys.exit(0 if abs($auc_train - $auc_eval) < 1e-9 else 1)" \
  || fail "eval AUC $auc_eval differs from train_eval's $auc_train"

# Two ranks: the dense embeddings are dense parameters, their gradients all-reduced like the
# towers'. The 2-rank evaluation (each rank's model on its share of the rows, metrics merged)
# equals one process evaluating the checkpoint rank 0 saved — it would not if the ranks' dense
# embeddings had drifted apart.
OMP_NUM_THREADS=1 "$TZREC" launch --nproc-per-node 2 --standalone -- train_eval --pipeline_config_path "$WORK/run.config" \
  --model_dir "$WORK/dist" --edit_config_json '{"data_config.batch_size":64,"data_config.num_workers":1}' \
  > "$WORK/dist.log" 2>&1 || { tail -20 "$WORK/dist.log"; fail "2-rank train_eval"; }
"$TZREC" eval --pipeline_config_path "$WORK/dist/pipeline.config" --model_dir "$WORK/dist" > /dev/null \
  2> "$WORK/dist_eval.log" || { tail -5 "$WORK/dist_eval.log"; fail "1-process eval of the 2-rank checkpoint"; }
auc_dist=$(auc "$WORK/dist/train_eval_result_v2.txt")
auc_one=$(auc "$WORK/dist/eval_result.txt")
$PY -c "import sys; sys.exit(0 if abs($auc_dist - $auc_one) < 1e-4 else 1)" \
  || fail "1-process eval AUC $auc_one of the 2-rank checkpoint differs from the 2-rank train_eval's $auc_dist"
echo "dense_embedding_test: OK"
