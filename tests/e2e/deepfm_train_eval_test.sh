#!/usr/bin/env bash
# End to end: gen_data → train_eval (DeepFM) → eval; checks AUC and every expected file.
# Usage: deepfm_train_eval_test.sh <tzrec binary> <repo root>
set -euo pipefail
TZREC=$1
ROOT=$2
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT
CONFIG=$ROOT/examples/deepfm_criteo_synth.config

"$TZREC" gen_data --output_dir "$WORK/data" --num_rows 200000 --num_eval_rows 40000 --seed 7 --format parquet
EDIT='{"train_input_path":"'$WORK'/data/train.parquet","eval_input_path":"'$WORK'/data/eval.parquet"}'
"$TZREC" train_eval --pipeline_config_path "$CONFIG" --model_dir "$WORK/model" \
  --edit_config_json "$EDIT" 2> "$WORK/train.log" || { cat "$WORK/train.log"; exit 1; }

fail() { echo "FAIL: $*"; cat "$WORK/train.log"; exit 1; }
for f in pipeline.config version train_eval_result_v2.txt; do
  [[ -s "$WORK/model/$f" ]] || fail "missing $f"
done
last_ckpt=$(ls -d "$WORK"/model/model.ckpt-* | sort -t- -k2 -n | tail -1)
for f in model.safetensors optimizer.safetensors manifest.json dataloader_state.json; do
  [[ -s "$last_ckpt/$f" ]] || fail "missing $last_ckpt/$f"
done
grep -q "Train epoch-0 step-0" "$WORK/train.log" || fail "no progress line"

# TensorBoard: training scalars in model_dir, evaluation metrics in model_dir/eval_val, each
# record's framing and CRCs checked by an independent decoder.
READ_EVENTS=$ROOT/tests/tools/read_tfevents.py
train_events=$(ls "$WORK"/model/events.out.tfevents.* | head -1)
eval_events=$(ls "$WORK"/model/eval_val/events.out.tfevents.* | head -1)
/usr/bin/python3 "$READ_EVENTS" events "$train_events" > "$WORK/train_events.jsonl" || fail "bad train events"
/usr/bin/python3 "$READ_EVENTS" events "$eval_events" > "$WORK/eval_events.jsonl" || fail "bad eval events"
for tag in loss/binary_cross_entropy loss/total lr/g0 lr/g1; do
  grep -q "\"$tag\"" "$WORK/train_events.jsonl" || fail "no $tag scalar in $train_events"
done
grep -q '"metric/auc"' "$WORK/eval_events.jsonl" || fail "no metric/auc scalar in $eval_events"

auc=$(tail -1 "$WORK/model/train_eval_result_v2.txt" | /usr/bin/python3 -c 'import json,sys; print(json.load(sys.stdin)["auc"])')
echo "train_eval AUC: $auc"
/usr/bin/python3 -c "import sys; sys.exit(0 if $auc >= 0.70 else 1)" || fail "AUC $auc < 0.70"

# eval on the final checkpoint writes eval_result.txt with the same step.
"$TZREC" eval --pipeline_config_path "$WORK/model/pipeline.config" > "$WORK/eval.out" 2> "$WORK/eval.log" \
  || { cat "$WORK/eval.log"; fail "eval failed"; }
[[ -s "$WORK/model/eval_result.txt" ]] || fail "missing eval_result.txt"
eval_auc=$(tail -1 "$WORK/model/eval_result.txt" | /usr/bin/python3 -c 'import json,sys; print(json.load(sys.stdin)["auc"])')
/usr/bin/python3 -c "import sys; sys.exit(0 if abs($eval_auc - $auc) < 1e-9 else 1)" \
  || fail "eval AUC $eval_auc differs from train_eval AUC $auc"

# Training again into the same model_dir without --continue_train is an error.
if "$TZREC" train_eval --pipeline_config_path "$CONFIG" --model_dir "$WORK/model" \
     --edit_config_json "$EDIT" 2> "$WORK/again.log"; then
  fail "second train_eval without --continue_train succeeded"
fi
grep -q "continue_train" "$WORK/again.log" || fail "error does not mention --continue_train"
grep -q "training time: data wait" "$WORK/train.log" || fail "no training time split in the log"

# train_config.mixed_precision BF16 (dense part under bf16 autocast, fp32 master weights): the
# same data and seed reach an AUC within 0.002 of fp32. Only where libtorch's bf16 matrix
# products are fast (oneDNN, CPUs with AVX-512: docs/tzrec-compatibility.md §2.5); elsewhere
# they run ~20x slower than fp32 and this run alone would take most of the test's time limit.
if grep -qw avx512bw /proc/cpuinfo && grep -qw avx512vl /proc/cpuinfo && grep -qw avx512dq /proc/cpuinfo; then
  BF16_EDIT='{"train_input_path":"'$WORK'/data/train.parquet","eval_input_path":"'$WORK'/data/eval.parquet","train_config.mixed_precision":"BF16"}'
  "$TZREC" train_eval --pipeline_config_path "$CONFIG" --model_dir "$WORK/bf16" \
    --edit_config_json "$BF16_EDIT" 2> "$WORK/bf16.log" || { cat "$WORK/bf16.log"; fail "BF16 train_eval"; }
  bf16_auc=$(tail -1 "$WORK/bf16/train_eval_result_v2.txt" | /usr/bin/python3 -c 'import json,sys; print(json.load(sys.stdin)["auc"])')
  echo "BF16 train_eval AUC: $bf16_auc (fp32 $auc)"
  /usr/bin/python3 -c "import sys; sys.exit(0 if abs($bf16_auc - $auc) <= 0.002 else 1)" \
    || fail "BF16 AUC $bf16_auc is not within 0.002 of fp32 $auc"
else
  echo "BF16 train_eval skipped: no AVX-512 on this CPU (libtorch's bf16 GEMMs are slow here)"
fi
# model_config.variational_dropout: every group gets learnt per-feature dropout rates, whose
# penalty is a logged loss; it still learns.
VD_EDIT='{"train_input_path":"'$WORK'/data/train.parquet","eval_input_path":"'$WORK'/data/eval.parquet","model_config.variational_dropout.regularization_lambda":"0.01"}'
"$TZREC" train_eval --pipeline_config_path "$CONFIG" --model_dir "$WORK/vd" \
  --edit_config_json "$VD_EDIT" 2> "$WORK/vd.log" || { cat "$WORK/vd.log"; fail "variational_dropout train_eval"; }
grep -q "deep_feature_p_loss:" "$WORK/vd.log" || fail "no deep_feature_p_loss in the variational_dropout log"
"$TZREC" list_checkpoint_params --checkpoint_path "$WORK/vd" > "$WORK/vd_params.txt" 2> /dev/null
grep -q '^group_variational_dropouts\.deep\.feature_p \[39\] float32$' "$WORK/vd_params.txt" \
  || fail "no [39] feature_p of the deep group in the checkpoint"
vd_auc=$(tail -1 "$WORK/vd/train_eval_result_v2.txt" | /usr/bin/python3 -c 'import json,sys; print(json.load(sys.stdin)["auc"])')
echo "variational_dropout train_eval AUC: $vd_auc (without $auc)"
/usr/bin/python3 -c "import sys; sys.exit(0 if $vd_auc > 0.7 else 1)" || fail "variational_dropout AUC $vd_auc <= 0.7"
echo OK
