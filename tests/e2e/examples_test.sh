#!/usr/bin/env bash
# Every config under examples/ validates and trains a few steps on generated data, then evaluates:
# the synthetic Criteo data, for configs that say `gen_data --dataset behaviour` that data set, and
# for those that say `gen_data --pipeline_config_path` their own (retrieval and generative models:
# their metrics are recall@k or per-task).
set -euo pipefail
TZREC=$1
ROOT=$2
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT
fail() { echo "FAIL: $*"; exit 1; }

for format in csv parquet; do
  "$TZREC" gen_data --output_dir "$WORK/data" --num_rows 3000 --num_eval_rows 1000 --seed 11 \
    --format "$format" 2> /dev/null
  "$TZREC" gen_data --dataset behaviour --output_dir "$WORK/behaviour" --num_rows 3000 --num_eval_rows 1000 \
    --seed 11 --format "$format" 2> /dev/null
done
for config in "$ROOT"/examples/*.config; do
  name=$(basename "$config" .config)
  if grep -q "gen_data --pipeline_config_path" "$config"; then
    "$TZREC" gen_data --pipeline_config_path "$config" --output_dir "$WORK/$name.data" --num_rows 1000 \
      --num_eval_rows 200 2> "$WORK/$name.gen.log" || { cat "$WORK/$name.gen.log"; fail "$name gen_data"; }
    "$TZREC" check_config --pipeline_config_path "$WORK/$name.data/pipeline.config" > /dev/null \
      || fail "$name does not validate"
    sed 's/num_epochs: [0-9]*/num_steps: 5/' "$WORK/$name.data/pipeline.config" > "$WORK/$name.config"
    "$TZREC" train_eval --pipeline_config_path "$WORK/$name.config" --model_dir "$WORK/$name" \
      2> "$WORK/$name.log" || { cat "$WORK/$name.log"; fail "$name train_eval"; }
    [[ -d "$WORK/$name/model.ckpt-4" ]] || fail "$name: no final checkpoint model.ckpt-4"
    grep -qE '"(recall@[0-9]+|auc_[a-z_]+)"' "$WORK/$name/train_eval_result_v2.txt" \
      || fail "$name: no metric in train_eval_result_v2.txt"
    echo "$name: OK"
    continue
  fi
  "$TZREC" check_config --pipeline_config_path "$config" > /dev/null || fail "$name does not validate"
  sed 's/num_epochs: [0-9]*/num_steps: 5/' "$config" > "$WORK/$name.config"
  ext=csv
  if grep -q "dataset_type: ParquetDataset" "$config"; then ext=parquet; fi
  data=$WORK/data
  if grep -q "gen_data --dataset behaviour" "$config"; then data=$WORK/behaviour; fi
  edit='{"train_input_path":"'$data'/train.'$ext'","eval_input_path":"'$data'/eval.'$ext'","data_config.batch_size":256}'
  "$TZREC" train_eval --pipeline_config_path "$WORK/$name.config" --model_dir "$WORK/$name" \
    --edit_config_json "$edit" 2> "$WORK/$name.log" || { cat "$WORK/$name.log"; fail "$name train_eval"; }
  [[ -d "$WORK/$name/model.ckpt-4" ]] || fail "$name: no final checkpoint model.ckpt-4"
  grep -q '"auc"' "$WORK/$name/train_eval_result_v2.txt" || fail "$name: no auc in train_eval_result_v2.txt"
  "$TZREC" eval --pipeline_config_path "$WORK/$name/pipeline.config" > /dev/null 2> "$WORK/$name.eval.log" \
    || { cat "$WORK/$name.eval.log"; fail "$name eval"; }
  echo "$name: OK"
done
