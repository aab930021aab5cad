#!/usr/bin/env bash
# What tracking the touched rows for delta embedding dumps (train_config.delta_embedding_dump_config,
# docs/tzrec-compatibility.md §5.15) costs a training step: `tzrec train_eval` of the Criteo DeepFM
# example (bench/configs/deepfm_criteo_b4096.config, 26 id features) on `tzrec gen_data` rows,
# without a dump and with one whose interval is longer than the run (every lookup is tracked, one
# dump of all touched rows at the end), in alternating rounds. Prints each run's training
# samples/s (the loop's own figure: data wait, checkpoints and evaluation excluded) and the time
# of the final dump (from its log lines).
#
# Usage: bench/delta_dump_overhead.sh
# Environment (all optional): BUILD_DIR=build ROUNDS=3 NUM_ROWS=409600 THREADS=2 WORK_DIR=<temp dir>
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
BUILD_DIR=${BUILD_DIR:-$ROOT/build}
TZREC=$BUILD_DIR/tzrec
ROUNDS=${ROUNDS:-3}
NUM_ROWS=${NUM_ROWS:-409600}
export OMP_NUM_THREADS=${THREADS:-2}
WORK=${WORK_DIR:-$(mktemp -d)}
[[ -n ${WORK_DIR:-} ]] || trap 'rm -rf "$WORK"' EXIT
CONFIG=$ROOT/bench/configs/deepfm_criteo_b4096.config

"$TZREC" gen_data --output_dir "$WORK/data" --num_rows "$NUM_ROWS" --num_eval_rows 4096 --seed 7 --format parquet \
  2> /dev/null
EDIT='{"train_input_path":"'$WORK'/data/train.parquet","eval_input_path":"","train_config.save_checkpoints_steps":100000}'
sed 's/^  num_epochs: 1$/  num_epochs: 1\n  delta_embedding_dump_config { dump_interval_steps: 100000 }/' "$CONFIG" \
  > "$WORK/dump.config"
cmp -s "$CONFIG" "$WORK/dump.config" && { echo "the config edit changed nothing" >&2; exit 1; }

rate() {  # <config> <model dir> → samples/s of the training loop
  "$TZREC" train_eval --pipeline_config_path "$1" --model_dir "$2" --edit_config_json "$EDIT" 2> "$2.log"
  sed -n 's/.*training time: .*; \([0-9]*\) samples\/s.*/\1/p' "$2.log"
}
for r in $(seq 1 "$ROUNDS"); do
  plain=$(rate "$CONFIG" "$WORK/plain_$r")
  dump=$(rate "$WORK/dump.config" "$WORK/dump_$r")
  written=$(sed -n 's/.*delta embedding dump: \([0-9]*\) row(s) at step .* in \([0-9.]*\) s$/\1 rows in \2 s/p' "$WORK/dump_$r.log")
  echo "round $r: without a dump $plain samples/s, tracking for a dump $dump samples/s (final dump: $written)"
done
