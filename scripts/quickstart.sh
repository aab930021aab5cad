#!/usr/bin/env bash
# Installs, builds, generates demo data, trains DeepFM with `tzrec train_eval`, then runs
# `tzrec eval` on the final checkpoint and prints its metrics.
set -euo pipefail
cd "$(dirname "$0")/.."
START=$SECONDS
trap 'echo "quickstart: $((SECONDS - START)) s elapsed"' EXIT
scripts/setup.sh --target tzrec

DATA_DIR=data/criteo_synth
MODEL_DIR=experiments/deepfm_criteo_synth
if [[ ! -f "$DATA_DIR/train.parquet" || ! -f "$DATA_DIR/eval.parquet" ]]; then
  build/tzrec gen_data --output_dir "$DATA_DIR" --format parquet
fi
rm -rf "$MODEL_DIR"
build/tzrec train_eval --pipeline_config_path examples/deepfm_criteo_synth.config --model_dir "$MODEL_DIR"
echo "== tzrec eval =="
build/tzrec eval --pipeline_config_path examples/deepfm_criteo_synth.config --model_dir "$MODEL_DIR"
echo "== $MODEL_DIR/eval_result.txt =="
cat "$MODEL_DIR/eval_result.txt"
echo "== tzrec export + predict =="
rm -rf "$MODEL_DIR/export" "$MODEL_DIR/predict"
build/tzrec export --pipeline_config_path "$MODEL_DIR/pipeline.config" --export_dir "$MODEL_DIR/export"
build/tzrec predict --scripted_model_path "$MODEL_DIR/export" --predict_input_path "$DATA_DIR/eval.parquet" \
  --predict_output_path "$MODEL_DIR/predict" --reserved_columns label
build/tzrec parquet_cat "$MODEL_DIR/predict/part-0.parquet" --limit 3
