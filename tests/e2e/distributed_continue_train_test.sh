#!/usr/bin/env bash
# --continue_train of multi-rank runs (ParquetDataset, ranks started by `tzrec launch`):
#   - same world size: 2 ranks training 0..15 then continuing to 29 end with exactly the weights,
#     optimizer state and data positions of 2 ranks training 0..29 at once;
#   - other world sizes: 1 process (steps 0..7) → 2 ranks (8..15) → 4 ranks (16..23) → 1 process
#     (24..31), each stage resuming the previous checkpoint (tables and optimizer state resharded,
#     the rows not trained yet re-split over the new ranks): every row is trained at most once
#     and the rows left are exactly those no stage consumed.
# Usage: distributed_continue_train_test.sh <tzrec binary> <repo root>
set -euo pipefail
TZREC=$1
ROOT=$2
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT
CONFIG=$WORK/deepfm_steps.config
sed 's/num_epochs: 1/num_steps: 30/' "$ROOT/examples/deepfm_criteo_synth.config" > "$CONFIG"
CMP=$ROOT/tests/tools/compare_safetensors.py
export OMP_NUM_THREADS=1 TORCH_MANUAL_SEED=1
fail() { echo "FAIL: $*"; exit 1; }

"$TZREC" gen_data --output_dir "$WORK/data" --num_rows 20000 --num_eval_rows 2000 --seed 3 --format parquet 2> /dev/null
run() {  # run <ranks> <model_dir> <num_steps> [extra flags]
  local ranks=$1 dir=$2 steps=$3; shift 3
  local edit='{"train_input_path":"'$WORK'/data/train.parquet","eval_input_path":"","data_config.batch_size":256,"data_config.num_workers":1,"train_config.save_checkpoints_steps":1000,"train_config.num_steps":'$steps'}'
  local cmd=("$TZREC")
  if (( ranks > 1 )); then cmd+=(launch --nproc-per-node "$ranks" --standalone --); fi
  "${cmd[@]}" train_eval --pipeline_config_path "$CONFIG" --model_dir "$dir" --edit_config_json "$edit" "$@" \
    > "$dir.log" 2>&1 || { tail -30 "$dir.log"; fail "train_eval on $ranks rank(s), $dir, $steps steps"; }
}

# 1. Same world size: the resumed run is the uninterrupted one.
run 2 "$WORK/full" 30
run 2 "$WORK/resumed" 16
run 2 "$WORK/resumed" 30 --continue_train
grep -q "training continues at step 16" "$WORK/resumed.log" || { tail -30 "$WORK/resumed.log"; fail "did not resume at 16"; }
for f in model.safetensors optimizer.safetensors model-000000-of-000002.safetensors model-000001-of-000002.safetensors \
         optimizer-000000-of-000002.safetensors optimizer-000001-of-000002.safetensors; do
  /usr/bin/python3 "$CMP" "$WORK/full/model.ckpt-29/$f" "$WORK/resumed/model.ckpt-29/$f" \
    || fail "$f differs between the resumed and the uninterrupted 2-rank run"
done
cmp -s "$WORK/full/model.ckpt-29/dataloader_state.json" "$WORK/resumed/model.ckpt-29/dataloader_state.json" \
  || fail "data positions differ between the resumed and the uninterrupted 2-rank run"
echo "2 ranks: resumed run equals the uninterrupted one"

# 2. 1 → 2 → 4 → 1 ranks, 8 steps each.
run 1 "$WORK/trip" 8
run 2 "$WORK/trip" 16 --continue_train
run 4 "$WORK/trip" 24 --continue_train
cp "$WORK/trip.log" "$WORK/trip4.log"
run 1 "$WORK/trip" 32 --continue_train
grep -q "training continues at step 24" "$WORK/trip.log" || { tail -30 "$WORK/trip.log"; fail "1 process did not resume at 24"; }
grep -q "re-split over the ranks" "$WORK/trip4.log" || fail "the 4-rank stage did not re-split the data"
[[ -f "$WORK/trip/model.ckpt-23/model-000003-of-000004.safetensors" ]] || fail "no 4-rank checkpoint at step 23"
/usr/bin/python3 - "$WORK/trip" <<'PY' || fail "rows trained over the 1 → 2 → 4 → 1 round trip"
import json, sys
def state(step):
    return json.load(open(f"{sys.argv[1]}/model.ckpt-{step}/dataloader_state.json"))
def left_and_consumed(pos):
    consumed = sum(pos["worker_rows"])
    left = sum(e - b for ranges in pos["worker_ranges"] for b, e in ranges) - consumed
    return left, consumed
# After the 4-rank stage: one position per rank; each consumed its 8 batches of 256 rows.
four = state(23)["train_positions"]
assert len(four) == 4 and all(p["world_size"] == 4 for p in four), four
assert [left_and_consumed(p)[1] for p in four] == [8 * 256] * 4
left4 = sum(left_and_consumed(p)[0] for p in four)
assert left4 == 20000 - 8 * 256 - 2 * 8 * 256 - 4 * 8 * 256, left4
# The final single-process stage read 8 more batches from what was left, nothing else.
final = state(31)["train_position"]
left, consumed = left_and_consumed(final)
assert consumed == 8 * 256, consumed
assert left == left4 - 8 * 256, (left, left4)
PY
echo "1 -> 2 -> 4 -> 1 ranks: every stage resumed on the rows not trained yet"
echo OK
