#!/usr/bin/env bash
# --continue_train resumes model, optimizer, step and data position: training 0..15, then
# continuing to step 29 gives the same weights and optimizer state as training 0..29 at once —
# for CsvDataset and ParquetDataset input, and for shuffled and for masked (use_mask) Parquet input. With Parquet, resuming
# with another number of loader workers still trains on every remaining row (checked through the
# data position).
set -euo pipefail
TZREC=$1
ROOT=$2
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT
CONFIG=$WORK/deepfm_steps.config
sed 's/num_epochs: 1/num_steps: 30/' "$ROOT/examples/deepfm_criteo_synth.config" > "$CONFIG"
CMP=$ROOT/tests/tools/compare_safetensors.py
fail() { echo "FAIL: $*"; exit 1; }

for format in csv parquet; do
  "$TZREC" gen_data --output_dir "$WORK/data" --num_rows 20000 --num_eval_rows 2000 --seed 3 \
    --format "$format" 2> /dev/null
done
run() {  # run <format> <model_dir> <num_steps> <num_workers> [extra flags]
  local format=$1 dir=$2 steps=$3 workers=$4; shift 4
  local dataset=ParquetDataset
  if [[ $format == csv ]]; then dataset=CsvDataset; fi
  local edit='"train_input_path":"'$WORK'/data/train.'$format'","eval_input_path":"","data_config.dataset_type":"'$dataset'","data_config.with_header":true,"data_config.batch_size":256,"train_config.save_checkpoints_steps":10'${EXTRA_EDIT:-}
  TORCH_MANUAL_SEED=1 OMP_NUM_THREADS=1 "$TZREC" train_eval --pipeline_config_path "$CONFIG" \
    --model_dir "$dir" --edit_config_json "{$edit,\"train_config.num_steps\":$steps,\"data_config.num_workers\":$workers}" \
    "$@" 2> "$dir.log" || { cat "$dir.log"; fail "train_eval $dir $steps"; }
}
for format in csv parquet; do
  run $format "$WORK/full_$format" 30 2
  run $format "$WORK/resumed_$format" 16 2
  [[ -d "$WORK/resumed_$format/model.ckpt-15" ]] || fail "$format: no checkpoint at step 15"
  run $format "$WORK/resumed_$format" 30 2 --continue_train
  grep -q "training continues at step 16" "$WORK/resumed_$format.log" \
    || { cat "$WORK/resumed_$format.log"; fail "$format: did not resume at 16"; }
  for f in model optimizer; do
    /usr/bin/python3 "$CMP" "$WORK/full_$format/model.ckpt-29/$f.safetensors" \
      "$WORK/resumed_$format/model.ckpt-29/$f.safetensors" || fail "$format: $f state differs after resume"
  done
  echo "$format: resumed run equals the uninterrupted one"
done

# resumed_equals_full NAME WHAT: WORK/resumed_NAME ends with the model and optimizer state of
# WORK/full_NAME, whose weights differ from WORK/full_parquet's (WHAT, for the message).
resumed_equals_full() {
  local name=$1 what=$2 f
  for f in model optimizer; do
    /usr/bin/python3 "$CMP" "$WORK/full_$name/model.ckpt-29/$f.safetensors" \
      "$WORK/resumed_$name/model.ckpt-29/$f.safetensors" || fail "$name: $f state differs after resume"
  done
  if /usr/bin/python3 "$CMP" "$WORK/full_$name/model.ckpt-29/model.safetensors" \
      "$WORK/full_parquet/model.ckpt-29/model.safetensors" > /dev/null 2>&1; then
    fail "$name: the same weights as $what"
  fi
  echo "parquet, $name: resumed run equals the uninterrupted one"
}

# Shuffled training (data_config.shuffle, windows of 3 batches per worker): at step 15 each of the
# 2 workers has delivered 8 batches, 2 of its third window; the resumed run reads that window
# again, skips them and still equals the uninterrupted one, which differs from the run in order.
SHUFFLE=',"data_config.shuffle":true,"data_config.shuffle_buffer_size":3'
EXTRA_EDIT=$SHUFFLE run parquet "$WORK/full_shuffled" 30 2
EXTRA_EDIT=$SHUFFLE run parquet "$WORK/resumed_shuffled" 16 2
/usr/bin/python3 - "$WORK/resumed_shuffled/model.ckpt-15/dataloader_state.json" <<'PY' || fail "shuffled position at step 15"
import json, sys
pos = json.load(open(sys.argv[1]))["train_position"]
assert pos.get("worker_window") == [2, 2], pos
assert sum(pos["worker_rows"]) == 12 * 256, pos
PY
EXTRA_EDIT=$SHUFFLE run parquet "$WORK/resumed_shuffled" 30 2 --continue_train
resumed_equals_full shuffled "the run in order"

# Training masks (sample_mask_prob with cat_0's use_mask): the masks of a batch depend on the seed,
# the rank and its rows only, so the resumed run masks as the uninterrupted one and ends equal; the
# masks change what is trained.
MASK=',"data_config.sample_mask_prob":0.3'
sed 's/^    feature_name: "cat_0"$/    feature_name: "cat_0"\n    use_mask: true\n    fg_encoded_default_value: "0"/' \
  "$CONFIG" > "$WORK/masked.config"
grep -q 'use_mask: true' "$WORK/masked.config" || fail "could not add use_mask to the config"
UNMASKED=$CONFIG
CONFIG=$WORK/masked.config
EXTRA_EDIT=$MASK run parquet "$WORK/full_masked" 30 2
EXTRA_EDIT=$MASK run parquet "$WORK/resumed_masked" 16 2
EXTRA_EDIT=$MASK run parquet "$WORK/resumed_masked" 30 2 --continue_train
CONFIG=$UNMASKED
resumed_equals_full masked "the run without masks"

# Parquet, 2 workers for steps 0..15, then 3 workers: 30 steps x 256 rows are consumed in all.
run parquet "$WORK/rewired" 16 2
run parquet "$WORK/rewired" 30 3 --continue_train
/usr/bin/python3 - "$WORK/rewired/model.ckpt-29/dataloader_state.json" <<'PY' || fail "rows consumed after a resume with 3 workers"
import json, sys
state = json.load(open(sys.argv[1]))
pos = state["train_position"]
assert pos["format"] == "parquet" and pos["num_workers"] == 3, pos
consumed = sum(pos["worker_rows"])
# Rows trained after the resume (14 steps) plus the rows already consumed by the ranges handed
# over: the re-split ranges only hold what was left, so the total left + consumed is 20000 - 16*256.
left = sum(e - b for ranges in pos["worker_ranges"] for b, e in ranges) - consumed
assert consumed == 14 * 256, consumed
assert left == 20000 - 30 * 256, left
PY
echo OK
