#!/usr/bin/env bash
# Generative ranking end to end: DlrmHSTU (tests/configs/generative/dlrm_hstu_small.config, the
# interleaving preprocessor with watch-time actions, contextual features, two STU layers) on
# `gen_data --pipeline_config_path` data (KuaiRand-shaped histories, one list label per candidate):
#   - train_eval learns: is_click AUC over the ~3 600 eval candidates above 0.55 (chance 0.5, its
#     spread there about 0.01);
#   - export → predict writes one list per row with one value per candidate (two per candidate for
#     the two-class task), the reserved columns alongside;
#   - a config without the contextual group is refused by check_config and by train_eval with one
#     line naming the group.
set -euo pipefail
TZREC=$1
ROOT=$2
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT
fail() { echo "FAIL: $*"; exit 1; }
PY=/usr/bin/python3
cd "$WORK"
CONFIG="$ROOT/tests/configs/generative/dlrm_hstu_small.config"

"$TZREC" gen_data --pipeline_config_path "$CONFIG" --output_dir data --num_rows 4000 --num_eval_rows 800 \
  2> gen.log || { cat gen.log; fail "gen_data"; }
"$TZREC" train_eval --pipeline_config_path data/pipeline.config --model_dir model 2> train.log \
  || { tail -5 train.log; fail "train_eval"; }
auc=$(sed -n 's/.*auc_is_click:\([0-9.]*\).*/\1/p' train.log | tail -1)
[[ -n "$auc" ]] || { tail -5 train.log; fail "no auc_is_click in the eval result"; }
$PY -c "import sys; sys.exit(0 if $auc > 0.55 else 1)" || fail "is_click AUC $auc: the model did not learn"
grep -q "grouped_auc_is_like" model/train_eval_result_v2.txt || fail "grouped_auc_is_like not in the result file"

"$TZREC" export --pipeline_config_path model/pipeline.config --export_dir export 2> export.log \
  || { cat export.log; fail "export"; }
"$TZREC" predict --scripted_model_path export --predict_input_path data/eval.parquet --predict_output_path pred \
  --reserved_columns user_id,cand_seq__video_id 2> predict.log || { cat predict.log; fail "predict"; }
"$TZREC" parquet_cat pred/part-0.parquet > pred.json
$PY - <<'PY' || fail "predictions per candidate"
import json
rows = [json.loads(l) for l in open("pred.json")]
assert len(rows) == 800, len(rows)
for r in rows:
    n = len(r["cand_seq__video_id"].split("|"))
    assert len(r["probs_is_click"]) == n, (n, r["probs_is_click"])
    assert len(r["y_watchtime"]) == n
    assert len(r["probs_is_like"]) == n and all(len(p) == 2 for p in r["probs_is_like"])
    assert all(0.0 < p < 1.0 for p in r["probs_is_click"])
PY

# Bad input: one line naming the cause.
sed 's/group_name: "contextual"/group_name: "ctx"/' "$CONFIG" > no_ctx.config
if "$TZREC" check_config --pipeline_config_path no_ctx.config > no_ctx.log 2>&1; then fail "no contextual group accepted"; fi
grep -q "dlrm_hstu needs a feature group named 'contextual'" no_ctx.log || { cat no_ctx.log; fail "no_ctx message"; }
if "$TZREC" train_eval --pipeline_config_path no_ctx.config --model_dir m2 > no_ctx_train.log 2>&1; then
  fail "train_eval ran without the contextual group"
fi
grep -v WARNING no_ctx_train.log > no_ctx_errors.log || true
[[ $(wc -l < no_ctx_errors.log) -eq 1 ]] && grep -q "^error: .*needs a feature group named 'contextual'" no_ctx_errors.log \
  || { cat no_ctx_train.log; fail "train_eval without the contextual group: not one error line"; }
echo "generative models: OK (is_click AUC $auc)"
