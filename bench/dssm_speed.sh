#!/usr/bin/env bash
# DSSM training speed of tzrec-cpp (bench/train_speed_bench.cc on in-memory batches whose negatives
# the loader's negative_sampler drew) next to plain PyTorch with an in-process sampler
# (bench/dssm_speed_reference.py), same data, model (bench/configs/dssm_b4096.config: batch 4096,
# 1024 negatives from a 1M-item table, towers [256, 128, 64]), optimizers and threads. The
# engines alternate in rounds and never run together; each engine's fastest round and every
# round's samples/s are printed, with the ratio, eval recall@10 of both and, for tzrec, the
# end-to-end rate of `tzrec train_eval` (loader threads reading CSV and sampling while training).
# Figures only. Target of the issue: >= 1.5x the reference.
#
# Usage: bench/dssm_speed.sh
# Environment: BUILD_DIR=build PYTHON=/usr/bin/python3 THREADS=2 ROUNDS=3 STEPS=30 WARMUP=3
#              TRAIN_ROWS=204800 WORK_DIR=<temp dir, removed afterwards>
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
BUILD_DIR="${BUILD_DIR:-$ROOT/build}"
PYTHON="${PYTHON:-/usr/bin/python3}"
THREADS="${THREADS:-2}"
ROUNDS="${ROUNDS:-3}"
STEPS="${STEPS:-30}"
WARMUP="${WARMUP:-3}"
TRAIN_ROWS="${TRAIN_ROWS:-204800}"
WORK="${WORK_DIR:-$(mktemp -d "${TMPDIR:-/tmp}/dssm_speed.XXXXXX")}"
[[ -n "${WORK_DIR:-}" ]] || trap 'rm -rf "$WORK"' EXIT
export OMP_NUM_THREADS="$THREADS"

"$PYTHON" "$ROOT/bench/dssm_speed_reference.py" gen --out_dir "$WORK" --train_rows "$TRAIN_ROWS" --eval_rows 20480
sed -e "s#\"train.csv\"#\"$WORK/train.csv\"#" -e "s#\"eval.csv\"#\"$WORK/eval.csv\"#" \
    -e "s#\"items.txt\"#\"$WORK/items.txt\"#" "$ROOT/bench/configs/dssm_b4096.config" > "$WORK/dssm.config"

for round in $(seq 1 "$ROUNDS"); do
  "$BUILD_DIR/tzrec_train_speed_bench" train --pipeline_config "$WORK/dssm.config" --format parquet \
    --train_input "$WORK/train.csv" --eval_input "$WORK/eval.csv" --batch_size 4096 --warmup_steps "$WARMUP" \
    --steps "$STEPS" --threads "$THREADS" 2> "$WORK/tzrec.log" | tail -1 > "$WORK/tzrec_$round.json"
  "$PYTHON" "$ROOT/bench/dssm_speed_reference.py" train --data_dir "$WORK" --warmup_steps "$WARMUP" \
    --steps "$STEPS" --threads "$THREADS" > "$WORK/ref_$round.json"
done
rm -rf "$WORK/model"  # a reused WORK_DIR: train from scratch, not from its old checkpoints
start=$(date +%s.%N)
"$BUILD_DIR/tzrec" train_eval --pipeline_config_path "$WORK/dssm.config" --model_dir "$WORK/model" \
  2> "$WORK/train_eval.log"
end=$(date +%s.%N)

"$PYTHON" - "$WORK" "$ROUNDS" "$TRAIN_ROWS" "$start" "$end" <<'PY'
import json, re, sys
work, rounds, rows, start, end = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), float(sys.argv[4]), float(sys.argv[5])
t = [json.load(open(f"{work}/tzrec_{r}.json")) for r in range(1, rounds + 1)]
p = [json.load(open(f"{work}/ref_{r}.json")) for r in range(1, rounds + 1)]
print("rounds tzrec samples/s:", [round(x["samples_per_sec"]) for x in t])
print("rounds torch samples/s:", [round(x["samples_per_sec"]) for x in p])
bt, bp = max(t, key=lambda x: x["samples_per_sec"]), max(p, key=lambda x: x["samples_per_sec"])
print(f"tzrec {bt['samples_per_sec']:.0f} samples/s (median step {bt['median_step_ms']:.1f} ms), "
      f"pytorch {bp['samples_per_sec']:.0f} samples/s (median step {bp['median_step_ms']:.1f} ms): "
      f"ratio {bt['samples_per_sec'] / bp['samples_per_sec']:.2f} (target >= 1.5)")
print(f"tzrec step split ms: {bt['split_ms']}")
print(f"eval recall@10: tzrec {bt['eval_metrics'].get('recall@10', float('nan')):.4f}, pytorch {bp['recall@10']:.4f}")
log = open(f"{work}/train_eval.log").read()
m = re.findall(r"([0-9.]+) samples/s\n", log)
print(f"tzrec train_eval end to end (CSV + sampling in loader threads, eval and checkpoint included): "
      f"{end - start:.1f} s wall; training {m[-1] if m else '?'} samples/s")
PY
