#!/usr/bin/env bash
# Sequence tables in multi-process runs (Gloo on 127.0.0.1), on TorchEasyRec's DBMTL with two
# sequence groups nested in its DEEP group (DIN encoders), data from gen_data:
#   - `tzrec plan` and the training log list the sequence tables ("sequence.<table>");
#   - two ranks train with the sequence tables row_wise (then column_wise / table_wise): the
#     unpooled lookups of items go through the all-to-all;
#   - the 2-rank checkpoint evaluated by 1 process and by 3 ranks gives the metrics train_eval
#     reported (checkpoints load at any world size), and one process continues training from it;
#   - a single-process checkpoint continues on 2 ranks.
# Usage: distributed_sequence_test.sh <tzrec binary> <repo root>
set -euo pipefail
TZREC=$1
ROOT=$2
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT
export OMP_NUM_THREADS=1

fail() { echo "FAIL: $*"; for f in "$WORK"/*.log; do echo "== $f"; tail -20 "$f"; done; exit 1; }
# The last "Eval Result" line's metrics (without the checkpoint name).
metrics_of() { grep "Eval Result" "$1" | tail -1 | sed 's/.*Eval Result[^:]*: //'; }
# Whether two metric lines agree to 1e-5 (ranks sum column blocks and merge metrics in another
# order than one process: float rounding only). A binned AUC counts the predictions per threshold
# bin, so a prediction within that rounding of a threshold moves one count to the next bin, which
# changes it by (opposite-class rows in those bins) / (positives × negatives) — 3.6e-5 seen once
# on this data — so those get 5e-4.
same_metrics() {
  /usr/bin/python3 - "$1" "$2" <<'PY'
import sys
a, b = (dict(kv.split(":") for kv in line.split()) for line in sys.argv[1:3])
tol = lambda k: 5e-4 if k.startswith("auc_binned") else 1e-5
sys.exit(0 if a.keys() == b.keys() and all(abs(float(a[k]) - float(b[k])) <= tol(k) for k in a) else 1)
PY
}

"$TZREC" gen_data --pipeline_config_path "$ROOT/tests/configs/gen_data/dbmtl_has_sequence_mock.config" \
  --output_dir "$WORK/data" --num_rows 1024 --num_eval_rows 256 2> "$WORK/gen.log" || fail "gen_data"
sed "s/num_epochs: [0-9]*/num_steps: 16/" "$WORK/data/pipeline.config" > "$WORK/data/run.config"
CONFIG=$WORK/data/run.config

"$TZREC" plan --pipeline_config_path "$CONFIG" --world_size 2 > "$WORK/plan.log" 2>&1 || fail "tzrec plan"
grep -Eq '^sequence\.click_50_seq__id_2_emb +10000 x 16 ' "$WORK/plan.log" || fail "tzrec plan does not list sequence.click_50_seq__id_2_emb"
"$TZREC" check_config --pipeline_config_path "$CONFIG" --world_size 2 > "$WORK/check.log" 2>&1 \
  || fail "check_config --world_size 2"

for sharding in row_wise column_wise,table_wise; do
  types=$(echo "$sharding" | sed 's/\([a-z_]*\)/sharding_types: \\"\1\\"/g; s/,/ /g')
  EDIT='{"train_config.save_checkpoints_steps":"8","train_config.num_steps":"16","data_config.batch_size":"64","data_config.num_workers":"1","train_config.global_embedding_constraints":"'$types'"}'
  D=$WORK/dist_${sharding%%,*}
  "$TZREC" launch --nproc-per-node 2 --standalone -- train_eval --pipeline_config_path "$CONFIG" \
    --model_dir "$D" --edit_config_json "$EDIT" > "$WORK/launch.log" 2>&1 || fail "2-rank train_eval ($sharding)"
  grep -Eq "^sequence\.click_50_seq__id_2_emb .* (${sharding/,/|}) " "$WORK/launch.log" \
    || fail "the plan did not shard sequence.click_50_seq__id_2_emb $sharding"
  want=$(metrics_of "$WORK/launch.log")
  [[ -n $want ]] || fail "2-rank train_eval reported no metrics ($sharding)"
  last=$(ls -d "$D"/model.ckpt-* | sort -t- -k2 -n | tail -1)
  "$TZREC" eval --pipeline_config_path "$D/pipeline.config" --checkpoint_path "$last" > /dev/null 2> "$WORK/eval1.log" \
    || fail "1-process eval of the 2-rank checkpoint ($sharding)"
  same_metrics "$(metrics_of "$WORK/eval1.log")" "$want" \
    || fail "1-process eval '$(metrics_of "$WORK/eval1.log")' != 2-rank train_eval '$want' ($sharding)"
  "$TZREC" launch --nproc-per-node 3 --standalone -- eval --pipeline_config_path "$D/pipeline.config" \
    --checkpoint_path "$last" --model_dir "$WORK/eval3" > "$WORK/eval3.log" 2>&1 || fail "3-rank eval ($sharding)"
  same_metrics "$(metrics_of "$WORK/eval3.log")" "$want" \
    || fail "3-rank eval '$(metrics_of "$WORK/eval3.log")' != 2-rank train_eval '$want' ($sharding)"
done

# One process continues the 2-rank run; two ranks continue a single-process run.
"$TZREC" train_eval --pipeline_config_path "$WORK/dist_row_wise/pipeline.config" --model_dir "$WORK/dist_row_wise" \
  --continue_train --edit_config_json '{"train_config.num_steps":"20"}' > /dev/null 2> "$WORK/cont1.log" \
  || fail "1-process continue_train of the 2-rank run"
grep -q "training continues at step 16" "$WORK/cont1.log" || fail "1 process did not continue at step 16"
"$TZREC" train_eval --pipeline_config_path "$CONFIG" --model_dir "$WORK/single" \
  --edit_config_json '{"train_config.num_steps":"8","data_config.batch_size":"64"}' > /dev/null 2> "$WORK/single.log" \
  || fail "1-process train_eval"
"$TZREC" launch --nproc-per-node 2 --standalone -- train_eval --pipeline_config_path "$WORK/single/pipeline.config" \
  --model_dir "$WORK/single" --continue_train --edit_config_json '{"train_config.num_steps":"12"}' \
  > "$WORK/cont2.log" 2>&1 || fail "2-rank continue_train of the single-process run"
grep -q "training continues at step 8" "$WORK/cont2.log" || fail "2 ranks did not continue at step 8"
echo "distributed_sequence_test: OK"
