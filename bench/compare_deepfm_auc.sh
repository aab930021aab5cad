#!/usr/bin/env bash
# Trains DeepFM on the synthetic Criteo data with tzrec-cpp and with the plain PyTorch reference
# (bench/deepfm_reference.py), same data and hyper-parameters, and prints both eval AUCs and their
# difference. Target: |diff| <= 0.005. Exit status 0 within tolerance, 3 outside, 2 on setup errors.
#
# Usage: bench/compare_deepfm_auc.sh
# Environment (all optional):
#   TZREC=build/tzrec                 tzrec-cpp binary
#   DATA_DIR=data/criteo_synth        train/eval .parquet (tzrec) and .csv (reference); generated with `tzrec gen_data` if missing
#   NUM_ROWS=200000 NUM_EVAL_ROWS=50000 SEED=2024   gen_data arguments (only when generating)
#   CONFIG=examples/deepfm_criteo_synth.config
#   PYTHON=/usr/bin/python3           Debian python with torch + sklearn
#   THREADS=0                         threads for both (0: each one's default)
#   TOLERANCE=0.005
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
TZREC="${TZREC:-$ROOT/build/tzrec}"
DATA_DIR="${DATA_DIR:-$ROOT/data/criteo_synth}"
CONFIG="${CONFIG:-$ROOT/examples/deepfm_criteo_synth.config}"
PYTHON="${PYTHON:-/usr/bin/python3}"
NUM_ROWS="${NUM_ROWS:-200000}"
NUM_EVAL_ROWS="${NUM_EVAL_ROWS:-50000}"
SEED="${SEED:-2024}"
THREADS="${THREADS:-0}"
TOLERANCE="${TOLERANCE:-0.005}"

die() { echo "compare_deepfm_auc: $*" >&2; exit 2; }

[[ -x "$TZREC" ]] || die "$TZREC not found; build it first (cmake --build build --target tzrec) or set TZREC"
[[ -x "$PYTHON" ]] || die "$PYTHON not found; install python3-torch and python3-sklearn or set PYTHON"
[[ -f "$CONFIG" ]] || die "$CONFIG not found"

# tzrec reads the Parquet files (the example config's ParquetDataset), the reference the CSV
# files holding the same rows.
for format in csv parquet; do
  if [[ ! -f "$DATA_DIR/train.$format" || ! -f "$DATA_DIR/eval.$format" ]]; then
    echo "== generating $format data in $DATA_DIR ($NUM_ROWS train + $NUM_EVAL_ROWS eval rows, seed $SEED)"
    "$TZREC" gen_data --output_dir "$DATA_DIR" --num_rows "$NUM_ROWS" \
      --num_eval_rows "$NUM_EVAL_ROWS" --seed "$SEED" --format "$format"
  fi
done

WORK="$(mktemp -d "${TMPDIR:-/tmp}/deepfm_auc.XXXXXX")"
trap 'rm -rf "$WORK"' EXIT
MODEL_DIR="$WORK/model_dir"

if [[ "$THREADS" != 0 ]]; then export OMP_NUM_THREADS="$THREADS"; fi

echo "== tzrec-cpp train_eval (log: $WORK/tzrec.log while running)"
start_ms=$(( $(date +%s%N) / 1000000 ))
if ! "$TZREC" train_eval --pipeline_config_path "$CONFIG" --model_dir "$MODEL_DIR" \
    --train_input_path "$DATA_DIR/train.parquet" --eval_input_path "$DATA_DIR/eval.parquet" \
    >"$WORK/tzrec.log" 2>&1; then
  tail -n 30 "$WORK/tzrec.log" >&2
  die "tzrec train_eval failed"
fi
tzrec_ms=$(( $(date +%s%N) / 1000000 - start_ms ))
RESULT="$MODEL_DIR/train_eval_result_v2.txt"
[[ -s "$RESULT" ]] || die "$RESULT missing: tzrec wrote no eval result"
# Last line = evaluation after the final checkpoint: {"global_step": N, "auc": v, ...}.
tzrec_auc=$("$PYTHON" -c 'import json,sys; print(json.loads(open(sys.argv[1]).read().splitlines()[-1])["auc"])' "$RESULT")

echo "== PyTorch reference (bench/deepfm_reference.py)"
start_ms=$(( $(date +%s%N) / 1000000 ))
ref_json=$("$PYTHON" "$ROOT/bench/deepfm_reference.py" --train_path "$DATA_DIR/train.csv" \
  --eval_path "$DATA_DIR/eval.csv" --threads "$THREADS")
ref_ms=$(( $(date +%s%N) / 1000000 - start_ms ))
echo "$ref_json"

"$PYTHON" - "$tzrec_auc" "$ref_json" "$TOLERANCE" "$tzrec_ms" "$ref_ms" <<'PY'
import json, sys
tzrec_auc = float(sys.argv[1])
ref = json.loads(sys.argv[2])
tol = float(sys.argv[3])
# tzrec's "auc" is the exact AUC (auc_binned appears only when thresholds is set); compare it
# with the reference's exact (sklearn) AUC.
diff = tzrec_auc - ref["auc"]
print(f"tzrec-cpp  auc(exact) = {tzrec_auc:.5f}   wall {float(sys.argv[4]) / 1000:.1f} s (train + evals)")
print(f"pytorch    auc(exact) = {ref['auc']:.5f}   binned-200 {ref['auc_binned_200']:.5f}   "
      f"wall {float(sys.argv[5]) / 1000:.1f} s   train {ref['samples_per_sec']:.0f} samples/s")
ok = abs(diff) <= tol
print(f"diff (tzrec - pytorch) = {diff:+.5f}   |diff| <= {tol}: {'OK' if ok else 'OUTSIDE TOLERANCE'}")
sys.exit(0 if ok else 3)
PY
