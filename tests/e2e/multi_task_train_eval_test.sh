#!/usr/bin/env bash
# End to end, multi-task: MMoE with two task towers (ctr on `label`, cvr on a derived `buy` label)
# and Pareto loss weighting → train_eval → eval. Checks per-tower AUCs, the weights in the log and
# in TensorBoard, the checkpoint's tower parameters and the best-checkpoint policy on auc_cvr.
# Then the same on two ranks (sharded tables, dense gradients averaged; each rank weights its own
# task losses, as TorchEasyRec does), DBMTL (cvr tower depending on the ctr tower) and PLE on one.
# Usage: multi_task_train_eval_test.sh <tzrec binary> <repo root>
set -euo pipefail
TZREC=$1
ROOT=$2
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT
fail() { echo "FAIL: $*"; [[ -f "$WORK/train.log" ]] && tail -40 "$WORK/train.log"; exit 1; }

"$TZREC" gen_data --output_dir "$WORK/raw" --num_rows 120000 --num_eval_rows 20000 --seed 5 --format csv 2> /dev/null
# buy: a conversion label that needs both a click and cat_1 % 3 == 0 (column 16).
mkdir -p "$WORK/data"
for split in train eval; do
  awk -F, 'NR == 1 { print $0 ",buy"; next } { print $0 "," (($1 == 1 && $16 % 3 == 0) ? 1 : 0) }' \
    "$WORK/raw/$split.csv" > "$WORK/data/$split.csv"
done

# The DeepFM example's features, read from CSV with both labels, under a multi-task model.
# write_config FILE: that config with the model block read from standard input.
write_config() {
  sed -n '1,/^model_config {/p' "$ROOT/examples/deepfm_criteo_synth.config" | sed '$d' \
    | sed -e 's/dataset_type: ParquetDataset/dataset_type: CsvDataset\n  with_header: true/' \
          -e 's/label_fields: "label"/label_fields: ["label", "buy"]/' \
          -e 's/num_epochs: 1/num_epochs: 1\n  keep_checkpoint_max: 1/' > "$1"
  {
    echo 'export_config { exporter_type: "best" best_exporter_metric: "auc_cvr" }'
    echo 'model_config {'
    echo '  feature_groups {'
    echo '    group_name: "all"'
    for i in $(seq 0 12); do echo "    feature_names: \"int_$i\""; done
    for i in $(seq 0 25); do echo "    feature_names: \"cat_$i\""; done
    echo '    group_type: DEEP'
    echo '  }'
    cat
    echo '}'
  } >> "$1"
}
CONFIG=$WORK/mmoe.config
write_config "$CONFIG" <<'MODEL'
  mmoe {
    expert_mlp { hidden_units: [128, 64] }
    gate_mlp { hidden_units: [16] }
    num_expert: 3
    task_towers {
      tower_name: "ctr" label_name: "label" mlp { hidden_units: [32] }
      losses { binary_cross_entropy {} } metrics { auc {} } pareto_min_loss_weight: 0.2
    }
    task_towers {
      tower_name: "cvr" label_name: "buy" mlp { hidden_units: [32] }
      losses { binary_cross_entropy {} } metrics { auc {} } pareto_min_loss_weight: 0.2
    }
  }
  use_pareto_loss_weight: true
MODEL
"$TZREC" check_config --pipeline_config_path "$CONFIG" > /dev/null || fail "config does not validate"

EDIT='{"train_input_path":"'$WORK'/data/train.csv","eval_input_path":"'$WORK'/data/eval.csv","data_config.batch_size":1024,"train_config.save_checkpoints_steps":20}'
"$TZREC" train_eval --pipeline_config_path "$CONFIG" --model_dir "$WORK/model" --edit_config_json "$EDIT" \
  2> "$WORK/train.log" || fail "train_eval"

result=$(tail -1 "$WORK/model/train_eval_result_v2.txt")
metric() { echo "$result" | /usr/bin/python3 -c "import json,sys; print(json.load(sys.stdin)['$1'])"; }
auc_ctr=$(metric auc_ctr)
auc_cvr=$(metric auc_cvr)
echo "train_eval: auc_ctr $auc_ctr auc_cvr $auc_cvr"
/usr/bin/python3 -c "import sys; sys.exit(0 if $auc_ctr >= 0.70 else 1)" || fail "auc_ctr $auc_ctr < 0.70"
/usr/bin/python3 -c "import sys; sys.exit(0 if $auc_cvr >= 0.85 else 1)" || fail "auc_cvr $auc_cvr < 0.85"
for key in binary_cross_entropy_ctr binary_cross_entropy_cvr; do
  metric "$key" > /dev/null || fail "no $key in train_eval_result_v2.txt"
done

# The Pareto weights: logged every log_step_count_steps, each >= its bound 0.2, summing to 1.
line=$(grep -m1 "Pareto loss weights at step" "$WORK/train.log") || fail "no Pareto weights in the log"
echo "$line"
/usr/bin/python3 - "$line" <<'PY' || fail "bad Pareto weights: $line"
import re, sys
w = {k: float(v) for k, v in re.findall(r"(binary_cross_entropy_\w+)[:=] ?([0-9.eE+-]+)", sys.argv[1])}
assert set(w) == {"binary_cross_entropy_ctr", "binary_cross_entropy_cvr"}, w
assert all(v >= 0.2 - 1e-6 for v in w.values()) and abs(sum(w.values()) - 1) < 1e-4, w
PY
events=$(ls "$WORK"/model/events.out.tfevents.* | head -1)
/usr/bin/python3 "$ROOT/tests/tools/read_tfevents.py" events "$events" > "$WORK/events.jsonl" || fail "bad events"
for tag in loss_weight/binary_cross_entropy_ctr loss_weight/binary_cross_entropy_cvr loss/binary_cross_entropy_cvr; do
  grep -q "\"$tag\"" "$WORK/events.jsonl" || fail "no $tag scalar"
done

# Tower parameters under TorchEasyRec's names.
"$TZREC" list_checkpoint_params --checkpoint_path "$WORK/model" > "$WORK/params.txt" || fail "list_checkpoint_params"
for name in mmoe.expert_mlps.2.mlp.1.perceptron.0.weight mmoe.gate_mlps.1.mlp.0.perceptron.0.weight \
            mmoe.gate_finals.0.weight _task_tower.1.tower_mlp.mlp.0.perceptron.0.weight _task_tower.0.linear.bias; do
  grep -q "$name" "$WORK/params.txt" || fail "no $name in the checkpoint"
done
# keep_checkpoint_max 1 with the best exporter on auc_cvr: the newest and the best remain.
count=$(ls -d "$WORK"/model/model.ckpt-* | wc -l)
[[ $count -ge 1 && $count -le 2 ]] || fail "$count checkpoints left, want the newest (+ the best)"

# eval on the final checkpoint reproduces the per-tower metrics.
"$TZREC" eval --pipeline_config_path "$WORK/model/pipeline.config" > /dev/null 2> "$WORK/eval.log" \
  || { cat "$WORK/eval.log"; fail "eval"; }
eval_cvr=$(tail -1 "$WORK/model/eval_result.txt" | /usr/bin/python3 -c 'import json,sys; print(json.load(sys.stdin)["auc_cvr"])')
/usr/bin/python3 -c "import sys; sys.exit(0 if abs($eval_cvr - $auc_cvr) < 1e-9 else 1)" \
  || fail "eval auc_cvr $eval_cvr differs from train_eval $auc_cvr"

# Two ranks: the Pareto weighting's extra backward passes run no collective, so nothing hangs.
# CSV input is split by file: two files per split.
mkdir -p "$WORK/parts"
for split in train eval; do
  tail -n +2 "$WORK/data/$split.csv" > "$WORK/parts/$split.rows"
  split -n l/2 "$WORK/parts/$split.rows" "$WORK/parts/$split." && rm "$WORK/parts/$split.rows"
  for part in "$WORK/parts/$split".a?; do
    { head -1 "$WORK/data/$split.csv"; cat "$part"; } > "$part.csv" && rm "$part"
  done
done
DIST_EDIT='{"train_input_path":"'$WORK'/parts/train.*.csv","eval_input_path":"'$WORK'/parts/eval.*.csv","data_config.batch_size":512,"train_config.save_checkpoints_steps":20}'
"$TZREC" launch --nproc-per-node 2 --standalone -- train_eval --pipeline_config_path "$CONFIG" \
  --model_dir "$WORK/dist" --edit_config_json "$DIST_EDIT" > "$WORK/dist.log" 2>&1 || { cat "$WORK/dist.log"; fail "2 ranks"; }
dist_cvr=$(tail -1 "$WORK/dist/train_eval_result_v2.txt" | /usr/bin/python3 -c 'import json,sys; print(json.load(sys.stdin)["auc_cvr"])')
echo "2 ranks: auc_cvr $dist_cvr"
/usr/bin/python3 -c "import sys; sys.exit(0 if $dist_cvr >= 0.85 else 1)" || { cat "$WORK/dist.log"; fail "2-rank auc_cvr $dist_cvr < 0.85"; }
grep -q "Pareto loss weights at step" "$WORK/dist.log" || fail "2 ranks: no Pareto weights in the log"

# DBMTL: bottom MLP, the cvr tower reading the ctr tower's output through its relation MLP.
DBMTL_CONFIG=$WORK/dbmtl.config
write_config "$DBMTL_CONFIG" <<'MODEL'
  dbmtl {
    bottom_mlp { hidden_units: [128] }
    task_towers {
      tower_name: "ctr" mlp { hidden_units: [64, 32] }
      losses { binary_cross_entropy {} } metrics { auc {} }
    }
    task_towers {
      tower_name: "cvr" mlp { hidden_units: [64, 32] } relation_mlp { hidden_units: [32] }
      relation_tower_names: "ctr" losses { binary_cross_entropy {} } metrics { auc {} }
    }
  }
MODEL
"$TZREC" train_eval --pipeline_config_path "$DBMTL_CONFIG" --model_dir "$WORK/dbmtl" --edit_config_json "$EDIT" \
  2> "$WORK/dbmtl.log" || { cat "$WORK/dbmtl.log"; fail "dbmtl train_eval"; }
result=$(tail -1 "$WORK/dbmtl/train_eval_result_v2.txt")
dbmtl_ctr=$(metric auc_ctr)
dbmtl_cvr=$(metric auc_cvr)
echo "dbmtl: auc_ctr $dbmtl_ctr auc_cvr $dbmtl_cvr"
/usr/bin/python3 -c "import sys; sys.exit(0 if $dbmtl_ctr >= 0.68 and $dbmtl_cvr >= 0.85 else 1)" \
  || { cat "$WORK/dbmtl.log"; fail "dbmtl AUCs $dbmtl_ctr / $dbmtl_cvr below 0.68 / 0.85"; }
grep -q "relation_mlps.cvr.mlp.0.perceptron.0.weight" <<< "$("$TZREC" list_checkpoint_params --checkpoint_path "$WORK/dbmtl")" \
  || fail "dbmtl: no relation_mlps.cvr in the checkpoint"

# PLE: two extraction networks of task and shared experts.
PLE_CONFIG=$WORK/ple.config
write_config "$PLE_CONFIG" <<'MODEL'
  ple {
    extraction_networks { network_name: "l0" expert_num_per_task: 2 share_num: 1
                          task_expert_net { hidden_units: [64] } share_expert_net { hidden_units: [64] } }
    extraction_networks { network_name: "l1" expert_num_per_task: 1 share_num: 1
                          task_expert_net { hidden_units: [32] } share_expert_net { hidden_units: [32] } }
    task_towers { tower_name: "ctr" label_name: "label" losses { binary_cross_entropy {} } metrics { auc {} } }
    task_towers { tower_name: "cvr" label_name: "buy" losses { binary_cross_entropy {} } metrics { auc {} } }
  }
MODEL
"$TZREC" train_eval --pipeline_config_path "$PLE_CONFIG" --model_dir "$WORK/ple" --edit_config_json "$EDIT" \
  2> "$WORK/ple.log" || { cat "$WORK/ple.log"; fail "ple train_eval"; }
result=$(tail -1 "$WORK/ple/train_eval_result_v2.txt")
ple_ctr=$(metric auc_ctr)
ple_cvr=$(metric auc_cvr)
echo "ple: auc_ctr $ple_ctr auc_cvr $ple_cvr"
/usr/bin/python3 -c "import sys; sys.exit(0 if $ple_ctr >= 0.68 and $ple_cvr >= 0.85 else 1)" \
  || { cat "$WORK/ple.log"; fail "ple AUCs $ple_ctr / $ple_cvr below 0.68 / 0.85"; }
echo "OK"
