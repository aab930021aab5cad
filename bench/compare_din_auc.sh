#!/usr/bin/env bash
# Trains MultiTowerDIN (examples/multi_tower_din_behaviour.config) and the same model without the
# click history (examples/multi_tower_behaviour.config) with tzrec-cpp on the synthetic behaviour
# data (`tzrec gen_data --dataset behaviour`), and prints both eval AUCs and the gap. The labels
# depend mainly on the attention between the target item and the history, so DIN must win.
# Target: DIN AUC >= no-history AUC + 0.01. Exit status 0 when met, 3 when not, 2 on setup errors.
#
# Usage: bench/compare_din_auc.sh
# Environment (all optional):
#   TZREC=build/tzrec                 tzrec-cpp binary
#   DATA_DIR=data/behaviour           train.csv / eval.csv; generated with `tzrec gen_data --dataset behaviour` if missing
#   NUM_ROWS=200000 NUM_EVAL_ROWS=50000 SEED=2024   gen_data arguments (only when generating)
#   DIN_CONFIG=examples/multi_tower_din_behaviour.config
#   BASE_CONFIG=examples/multi_tower_behaviour.config
#   THREADS=0                         OMP_NUM_THREADS for tzrec (0: its default)
#   MIN_GAP=0.01
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
TZREC="${TZREC:-$ROOT/build/tzrec}"
DATA_DIR="${DATA_DIR:-$ROOT/data/behaviour}"
DIN_CONFIG="${DIN_CONFIG:-$ROOT/examples/multi_tower_din_behaviour.config}"
BASE_CONFIG="${BASE_CONFIG:-$ROOT/examples/multi_tower_behaviour.config}"
NUM_ROWS="${NUM_ROWS:-200000}"
NUM_EVAL_ROWS="${NUM_EVAL_ROWS:-50000}"
SEED="${SEED:-2024}"
THREADS="${THREADS:-0}"
MIN_GAP="${MIN_GAP:-0.01}"

die() { echo "compare_din_auc: $*" >&2; exit 2; }

[[ -x "$TZREC" ]] || die "$TZREC not found; build it first (cmake --build build --target tzrec) or set TZREC"
for config in "$DIN_CONFIG" "$BASE_CONFIG"; do [[ -f "$config" ]] || die "$config not found"; done

if [[ ! -f "$DATA_DIR/train.csv" || ! -f "$DATA_DIR/eval.csv" ]]; then
  echo "== generating behaviour data in $DATA_DIR ($NUM_ROWS train + $NUM_EVAL_ROWS eval rows, seed $SEED)"
  "$TZREC" gen_data --dataset behaviour --output_dir "$DATA_DIR" --num_rows "$NUM_ROWS" \
    --num_eval_rows "$NUM_EVAL_ROWS" --seed "$SEED" || die "gen_data failed"
fi
echo "== data: $DATA_DIR: $(( $(wc -l < "$DATA_DIR/train.csv") - 1 )) train rows, $(( $(wc -l < "$DATA_DIR/eval.csv") - 1 )) eval rows"

WORK="$(mktemp -d "${TMPDIR:-/tmp}/din_auc.XXXXXX")"
trap 'rm -rf "$WORK"' EXIT

if [[ "$THREADS" != 0 ]]; then export OMP_NUM_THREADS="$THREADS"; fi

# train <name> <config>: trains into $WORK/<name>, sets auc_<name> and ms_<name>.
train() {
  local name=$1 config=$2
  local model_dir="$WORK/$name"
  echo "== tzrec train_eval $(basename "$config") (log: $WORK/$name.log while running)"
  local start_ms=$(( $(date +%s%N) / 1000000 ))
  if ! "$TZREC" train_eval --pipeline_config_path "$config" --model_dir "$model_dir" \
      --train_input_path "$DATA_DIR/train.csv" --eval_input_path "$DATA_DIR/eval.csv" \
      > "$WORK/$name.log" 2>&1; then
    tail -n 30 "$WORK/$name.log" >&2
    die "tzrec train_eval failed on $config"
  fi
  local ms=$(( $(date +%s%N) / 1000000 - start_ms ))
  local result="$model_dir/train_eval_result_v2.txt"
  [[ -s "$result" ]] || die "$result missing: tzrec wrote no eval result"
  # Last line = evaluation after the final checkpoint: {"global_step": N, "auc": v, ...}.
  local auc
  auc=$(tail -n 1 "$result" | sed -n 's/.*"auc": *\([-0-9.eE+]*\).*/\1/p')
  [[ -n "$auc" ]] || die "no auc in the last line of $result"
  printf -v "auc_$name" '%s' "$auc"
  printf -v "ms_$name" '%s' "$ms"
}

train din "$DIN_CONFIG"
train base "$BASE_CONFIG"

awk -v din="$auc_din" -v base="$auc_base" -v gap="$MIN_GAP" -v din_ms="$ms_din" -v base_ms="$ms_base" 'BEGIN {
  printf "multi_tower_din (history)    auc = %.5f   wall %.1f s (train + eval)\n", din, din_ms / 1000
  printf "multi_tower (no history)     auc = %.5f   wall %.1f s (train + eval)\n", base, base_ms / 1000
  ok = din >= base + gap
  printf "gap (din - no history) = %+.5f   >= %s: %s\n", din - base, gap, ok ? "OK" : "BELOW TARGET"
  exit ok ? 0 : 3
}'
