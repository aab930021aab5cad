#!/usr/bin/env bash
# Installs, builds, generates demo data, trains DeepFM with `tzrec train_eval`, then runs
# `tzrec eval` on the final checkpoint and prints its metrics.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh

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
