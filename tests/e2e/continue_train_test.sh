#!/usr/bin/env bash
# --continue_train resumes model, optimizer, step and data position: training 0..15, then
# continuing to step 29 gives the same weights and optimizer state as training 0..29 at once.
set -euo pipefail
TZREC=$1
ROOT=$2
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT
CONFIG=$WORK/deepfm_steps.config
sed 's/num_epochs: 1/num_steps: 30/' "$ROOT/examples/deepfm_criteo_synth.config" > "$CONFIG"
CMP=$ROOT/tests/tools/compare_safetensors.py
fail() { echo "FAIL: $*"; exit 1; }

"$TZREC" gen_data --output_dir "$WORK/data" --num_rows 20000 --num_eval_rows 2000 --seed 3 2> /dev/null
common='"train_input_path":"'$WORK'/data/train.csv","eval_input_path":"","data_config.batch_size":256,"train_config.save_checkpoints_steps":10'
run() {  # run <model_dir> <num_steps> [extra flags]
  local dir=$1 steps=$2; shift 2
  TORCH_MANUAL_SEED=1 OMP_NUM_THREADS=1 "$TZREC" train_eval --pipeline_config_path "$CONFIG" \
    --model_dir "$dir" --edit_config_json "{$common,\"train_config.num_steps\":$steps}" "$@" 2> "$dir.log" \
    || { cat "$dir.log"; fail "train_eval $dir $steps"; }
}
run "$WORK/full" 30
run "$WORK/resumed" 16
[[ -d "$WORK/resumed/model.ckpt-15" ]] || fail "no checkpoint at step 15"
run "$WORK/resumed" 30 --continue_train
grep -q "training continues at step 16" "$WORK/resumed.log" || { cat "$WORK/resumed.log"; fail "did not resume at 16"; }
for f in model optimizer; do
  /usr/bin/python3 "$CMP" "$WORK/full/model.ckpt-29/$f.safetensors" "$WORK/resumed/model.ckpt-29/$f.safetensors" \
    || fail "$f state differs after resume"
done
echo OK
