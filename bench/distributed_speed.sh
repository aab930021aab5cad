#!/usr/bin/env bash
# Training speed of one process against two ranks on this machine, the same global batch:
# `tzrec train_eval` on bench/configs/deepfm_criteo_b4096.config (shape (a) of train_speed.sh) from
# Parquet files written by `tzrec gen_data`; one process with THREADS threads and batch BATCH,
# then `tzrec launch --nproc-per-node 2` with THREADS/2 threads and batch BATCH/2 per rank (tables
# sharded by the planner, dense gradients all-reduced). Prints samples/s of both (end to end:
# data wait included, checkpoints and evaluation excluded), their ratio, and the bytes rank 0
# sent and the time it spent per training step in each collective. Figures only: the exit status says nothing
# about targets.
#
# Usage: bench/distributed_speed.sh
# Environment (all optional):
#   BUILD_DIR=build  THREADS=2  BATCH=4096  STEPS=40  NUM_ROWS=409600  SEED=2024
#   QUICK=0          1: few steps on few rows (smoke test)
#   WORK_DIR=<temp dir, removed afterwards>
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
BUILD_DIR="${BUILD_DIR:-$ROOT/build}"
TZREC="${TZREC:-$BUILD_DIR/tzrec}"
THREADS="${THREADS:-2}"
BATCH="${BATCH:-4096}"
SEED="${SEED:-2024}"
if [[ "${QUICK:-0}" == 1 ]]; then
  STEPS="${STEPS:-4}"; NUM_ROWS="${NUM_ROWS:-40960}"
else
  STEPS="${STEPS:-40}"; NUM_ROWS="${NUM_ROWS:-409600}"
fi
BASE_CONFIG="$ROOT/bench/configs/deepfm_criteo_b4096.config"

die() { echo "distributed_speed: $*" >&2; exit 2; }
[[ -x "$TZREC" ]] || die "$TZREC not found; build it (cmake --build $BUILD_DIR --target tzrec) or set BUILD_DIR"
(( NUM_ROWS >= STEPS * BATCH )) || die "NUM_ROWS=$NUM_ROWS is less than STEPS x BATCH = $((STEPS * BATCH))"
if [[ -n "${WORK_DIR:-}" ]]; then
  WORK="$WORK_DIR"; mkdir -p "$WORK"
else
  WORK="$(mktemp -d "${TMPDIR:-/tmp}/distributed_speed.XXXXXX")"
  trap 'rm -rf "$WORK"' EXIT
fi

# The base config trains num_epochs; this run is STEPS steps (exactly one of the two may be set).
CONFIG="$WORK/deepfm.config"
grep -q '^  num_epochs: 1$' "$BASE_CONFIG" || die "$BASE_CONFIG: expected a 'num_epochs: 1' line in train_config"
sed "s/^  num_epochs: 1$/  num_steps: $STEPS/" "$BASE_CONFIG" > "$CONFIG"

"$TZREC" gen_data --output_dir "$WORK/data" --num_rows "$NUM_ROWS" --num_eval_rows 0 --seed "$SEED" \
  --format parquet 2> /dev/null || die "gen_data failed"

# train <name> <ranks> <batch per rank> <threads per rank>
train() {
  local name=$1 ranks=$2 batch=$3 threads=$4
  local edit='{"train_input_path":"'$WORK'/data/train.parquet","eval_input_path":"","data_config.batch_size":'$batch',"train_config.save_checkpoints_steps":100000,"train_config.log_step_count_steps":100000}'
  local cmd=("$TZREC")
  if (( ranks > 1 )); then cmd+=(launch --nproc-per-node "$ranks" --standalone --); fi
  OMP_NUM_THREADS=$threads "${cmd[@]}" train_eval --pipeline_config_path "$CONFIG" --model_dir "$WORK/$name" \
    --edit_config_json "$edit" > "$WORK/$name.log" 2>&1 || { tail -20 "$WORK/$name.log"; die "$name run failed"; }
}
samples_per_sec() { grep -o '[0-9.]* samples/s' "$1" | tail -1 | cut -d' ' -f1; }

train one 1 "$BATCH" "$THREADS"
train two 2 $((BATCH / 2)) $(( THREADS / 2 > 0 ? THREADS / 2 : 1 ))
one=$(samples_per_sec "$WORK/one.log")
two=$(samples_per_sec "$WORK/two.log")
[[ -n "$one" && -n "$two" ]] || die "no samples/s in the logs ($WORK/one.log, $WORK/two.log)"
echo "global batch $BATCH, $STEPS steps, $THREADS threads in all"
echo "1 process : $one samples/s"
echo "2 ranks   : $two samples/s ($(/usr/bin/python3 -c "print(f'{$two / $one:.2f}')")x one process)"
# The plan rank 0 logged: the lines after "embedding sharding plan:" up to the next log record.
awk '/embedding sharding plan:/ && !on {on = 1; next} on && /^\[/ {exit} on {print}' "$WORK/two.log"
grep -o 'collectives per training step on rank 0 .*' "$WORK/two.log" || die "no traffic line in $WORK/two.log"
