#!/usr/bin/env bash
# AUC of tzrec-cpp's MultiTowerDIN against the plain PyTorch reference (bench/din_reference.py
# through train_speed_reference.py) over several initial-weight seeds: the same model, data,
# optimizers and batch order in both, one epoch each (the shape (c) of train_speed.sh). One seed's
# AUC moves by several thousandths with the initial weights alone, in both engines, so the
# comparison is of the means. Prints each seed's AUCs and the mean gap; target |gap| <= 0.003.
# Exit status 0 when met, 3 when not, 2 on setup errors.
#
# Usage: bench/din_auc_seeds.sh
# Environment (all optional):
#   BUILD_DIR=build  PYTHON=/usr/bin/python3  THREADS=2
#   SEEDS="1 2 3 4"                    initial-weight seeds (torch.manual_seed in both engines)
#   NUM_ROWS=204800 NUM_EVAL_ROWS=50000 DATA_SEED=2024   the behaviour data (gen_data)
#   BF16=0                             1: tzrec with mixed_precision "BF16" (reference fp32)
#   MAX_GAP=0.003  WORK_DIR=<temp dir, removed afterwards>
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
BUILD_DIR="${BUILD_DIR:-$ROOT/build}"
TZREC="$BUILD_DIR/tzrec"
BENCH="$BUILD_DIR/tzrec_train_speed_bench"
PYTHON="${PYTHON:-/usr/bin/python3}"
THREADS="${THREADS:-2}"
SEEDS="${SEEDS:-1 2 3 4}"
NUM_ROWS="${NUM_ROWS:-204800}"
NUM_EVAL_ROWS="${NUM_EVAL_ROWS:-50000}"
DATA_SEED="${DATA_SEED:-2024}"
BF16="${BF16:-0}"
MAX_GAP="${MAX_GAP:-0.003}"
die() { echo "din_auc_seeds: $*" >&2; exit 2; }
[[ -x "$TZREC" && -x "$BENCH" ]] || die "build tzrec and tzrec_train_speed_bench (-DTZREC_BUILD_BENCH=ON) first"
if [[ -n "${WORK_DIR:-}" ]]; then WORK="$WORK_DIR"; mkdir -p "$WORK"; else WORK=$(mktemp -d); trap 'rm -rf "$WORK"' EXIT; fi

for format in csv parquet; do
  "$TZREC" gen_data --dataset behaviour --output_dir "$WORK/data" --num_rows "$NUM_ROWS" \
    --num_eval_rows "$NUM_EVAL_ROWS" --seed "$DATA_SEED" --format "$format" > /dev/null 2>&1 || die "gen_data"
done
CONFIG="$ROOT/bench/configs/multi_tower_din_behaviour_b4096.config"
if [[ "$BF16" == 1 ]]; then
  sed 's/^train_config {/train_config {\n  mixed_precision: "BF16"/' "$CONFIG" > "$WORK/din.config"
  CONFIG="$WORK/din.config"
fi
auc_of() { tail -1 "$1" | "$PYTHON" -c 'import json,sys; print(json.load(sys.stdin)["auc"])'; }
for seed in $SEEDS; do
  "$BENCH" train --pipeline_config "$CONFIG" --format parquet --train_input "$WORK/data/train.parquet" \
    --eval_input "$WORK/data/eval.parquet" --batch_size 4096 --warmup_steps 3 --threads "$THREADS" \
    --init_seed "$seed" > "$WORK/tzrec_$seed.json" 2> "$WORK/tzrec_$seed.log" || die "tzrec seed $seed"
  "$PYTHON" "$ROOT/bench/train_speed_reference.py" --shape din --train_csv "$WORK/data/train.csv" \
    --eval_csv "$WORK/data/eval.csv" --batch_size 4096 --warmup_steps 3 --threads "$THREADS" --seed "$seed" \
    --sparse_lr 0.5 --dense_lr 0.002 > "$WORK/ref_$seed.json" 2> "$WORK/ref_$seed.log" || die "reference seed $seed"
  echo "seed $seed: tzrec $(auc_of "$WORK/tzrec_$seed.json")  pytorch $(auc_of "$WORK/ref_$seed.json")"
done | tee "$WORK/aucs.txt"
"$PYTHON" - "$WORK/aucs.txt" "$MAX_GAP" <<'PY'
import statistics, sys
rows = [l.split() for l in open(sys.argv[1]) if l.startswith("seed")]
t = [float(r[3]) for r in rows]
p = [float(r[5]) for r in rows]
gap = statistics.mean(t) - statistics.mean(p)
sd = lambda v: statistics.stdev(v) if len(v) > 1 else 0.0
print(f"mean AUC tzrec {statistics.mean(t):.4f} (sd {sd(t):.4f})  pytorch {statistics.mean(p):.4f} (sd {sd(p):.4f})"
      f"  gap {gap:+.4f} (target |gap| <= {float(sys.argv[2])})")
sys.exit(0 if abs(gap) <= float(sys.argv[2]) else 3)
PY
