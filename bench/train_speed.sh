#!/usr/bin/env bash
# Side-by-side training speed of tzrec-cpp (bench/train_speed_bench.cc, TrainingSession on
# in-memory batches) and plain PyTorch (bench/train_speed_reference.py) on the same generated data,
# same model, optimizers, batch size and threads, on two shapes:
#   (a) Criteo DeepFM (bench/configs/deepfm_criteo_b4096.config) on `tzrec gen_data` rows
#       (Parquet for tzrec, the same rows as CSV for the reference), one epoch, eval AUC on
#       held-out rows;
#   (b) embedding-bound MultiTower (bench/configs/multitower_multihot.config): 26 multi-hot Zipf
#       features, ~10 ids per bag, ROWS x 64 tables;
#   (c) MultiTowerDIN (bench/configs/multi_tower_din_behaviour_b4096.config) on `tzrec gen_data
#       --dataset behaviour` rows (Parquet for tzrec, the same rows as CSV for the reference), one
#       epoch, eval AUC on held-out rows; tzrec in fp32 and with mixed_precision "BF16", both
#       against the fp32 reference (bench/din_reference.py).
# Prints samples/s of both and their ratio, eval AUC, peak RSS (and tzrec's memory budget), the
# end-to-end rate of `tzrec train_eval` from the Parquet file against the in-memory one (a), the
# time split of a tzrec step and the MLP's share of the measured GEMM rate (roofline). The engines
# run one after the other, never together. Figures only: the exit status says nothing about targets.
#
# Usage: bench/train_speed.sh
# Environment (all optional):
#   BUILD_DIR=build                    holds tzrec and tzrec_train_speed_bench (-DTZREC_BUILD_BENCH=ON)
#   PYTHON=/usr/bin/python3            Debian python with torch + sklearn
#   THREADS=2                          torch threads / OMP_NUM_THREADS of both engines
#   QUICK=0                            1: few steps, small tables (smoke test, ~1 minute)
#   SHAPES="a b c"                     which shapes to run
#   ROWS=1000000                       shape (b) rows per table (QUICK: 20000)
#   NUM_ROWS=204800 NUM_EVAL_ROWS=50000   shape (a) train / held-out rows (QUICK: 24576 / 8192)
#   STEPS_B=20                         shape (b) timed steps (QUICK: 4)
#   NUM_ROWS_C=204800 NUM_EVAL_ROWS_C=50000   shape (c) train / held-out rows (QUICK: 24576 / 8192)
#   WARMUP=3                           untimed warm-up steps per engine and shape (QUICK: 1)
#   ROUNDS_A=3 ROUNDS_B=2 ROUNDS_C=2   rounds per shape (QUICK: 1); a round runs tzrec, then the
#                                      reference (c: then tzrec BF16); each engine's fastest round
#                                      is reported, and
#                                      every round's samples/s is printed (a shared machine's load
#                                      changes by the minute, so alternating rounds let both
#                                      engines meet the same conditions)
#   BF16=1 on CPUs with AVX-512, else 0   BF16 rounds of (a) and (c) (see below)
#   SEED=2024  WORK_DIR=<temp dir, removed afterwards>
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
BUILD_DIR="${BUILD_DIR:-$ROOT/build}"
TZREC="${TZREC:-$BUILD_DIR/tzrec}"
BENCH="${BENCH:-$BUILD_DIR/tzrec_train_speed_bench}"
PYTHON="${PYTHON:-/usr/bin/python3}"
THREADS="${THREADS:-2}"
QUICK="${QUICK:-0}"
SHAPES="${SHAPES:-a b c}"
SEED="${SEED:-2024}"
# BF16 rounds: libtorch 1.13 runs CPU bf16 matrix products through oneDNN only on CPUs with
# AVX-512 (avx512bw/vl/dq); elsewhere its fallback runs at ~2 GFLOP/s (≈ 20x slower than fp32), so
# they are skipped there unless BF16=1.
if grep -qw avx512bw /proc/cpuinfo && grep -qw avx512vl /proc/cpuinfo && grep -qw avx512dq /proc/cpuinfo; then
  BF16="${BF16:-1}"
else
  BF16="${BF16:-0}"
fi
BATCH=4096
if [[ "$QUICK" == 1 ]]; then
  ROWS="${ROWS:-20000}"; NUM_ROWS="${NUM_ROWS:-24576}"; NUM_EVAL_ROWS="${NUM_EVAL_ROWS:-8192}"
  STEPS_B="${STEPS_B:-4}"; WARMUP="${WARMUP:-1}"; EVAL_ROWS_B=4096
  NUM_ROWS_C="${NUM_ROWS_C:-24576}"; NUM_EVAL_ROWS_C="${NUM_EVAL_ROWS_C:-8192}"
  ROUNDS_A="${ROUNDS_A:-1}"; ROUNDS_B="${ROUNDS_B:-1}"; ROUNDS_C="${ROUNDS_C:-1}"
else
  ROUNDS_A="${ROUNDS_A:-3}"; ROUNDS_B="${ROUNDS_B:-2}"; ROUNDS_C="${ROUNDS_C:-2}"
  ROWS="${ROWS:-1000000}"; NUM_ROWS="${NUM_ROWS:-204800}"; NUM_EVAL_ROWS="${NUM_EVAL_ROWS:-50000}"
  STEPS_B="${STEPS_B:-20}"; WARMUP="${WARMUP:-3}"; EVAL_ROWS_B=16384
  NUM_ROWS_C="${NUM_ROWS_C:-204800}"; NUM_EVAL_ROWS_C="${NUM_EVAL_ROWS_C:-50000}"
fi

die() { echo "train_speed: $*" >&2; exit 2; }
[[ -x "$TZREC" ]] || die "$TZREC not found; build it (cmake --build $BUILD_DIR --target tzrec) or set BUILD_DIR"
[[ -x "$BENCH" ]] || die "$BENCH not found; configure with -DTZREC_BUILD_BENCH=ON and build tzrec_train_speed_bench"
[[ -x "$PYTHON" ]] || die "$PYTHON not found; install python3-torch and python3-sklearn or set PYTHON"

if [[ -n "${WORK_DIR:-}" ]]; then
  WORK="$WORK_DIR"; mkdir -p "$WORK"
else
  WORK="$(mktemp -d "${TMPDIR:-/tmp}/train_speed.XXXXXX")"
  trap 'rm -rf "$WORK"' EXIT
fi
export OMP_NUM_THREADS="$THREADS"

# run_json NAME CMD...: runs CMD, keeps its last stdout line (the JSON report) in $WORK/NAME.json.
run_json() {
  local name="$1"; shift
  if ! "$@" >"$WORK/$name.out" 2>"$WORK/$name.err"; then
    tail -n 20 "$WORK/$name.err" >&2
    die "$name failed"
  fi
  tail -n 1 "$WORK/$name.out" >"$WORK/$name.json"
}

# pick_fastest NAME ROUNDS: $WORK/NAME.json = the round NAME_<r>.json with the most samples/s;
# prints every round's samples/s.
pick_fastest() {
  "$PYTHON" - "$WORK" "$1" "$2" <<'PY'
import json, shutil, sys
work, name, rounds = sys.argv[1], sys.argv[2], int(sys.argv[3])
runs = [json.load(open(f"{work}/{name}_{r}.json")) for r in range(rounds)]
best = max(range(rounds), key=lambda r: runs[r]["samples_per_sec"])
shutil.copy(f"{work}/{name}_{best}.json", f"{work}/{name}.json")
print(f"{name}: samples/s per round " + ", ".join(f"{x['samples_per_sec']:,.0f}" for x in runs) +
      f"; fastest: round {best + 1}")
PY
}

summary() {  # summary SHAPE_LABEL TARGET_RATIO TARGET_ROOFLINE(or -) tzrec.json ref.json
  "$PYTHON" - "$@" <<'PY'
import json, sys
label, ratio_target, roof_target = sys.argv[1:4]
t = json.load(open(sys.argv[4])); r = json.load(open(sys.argv[5]))
gib = lambda b: b / 2**30
ratio = t["samples_per_sec"] / r["samples_per_sec"]
print(f"\n== shape ({label}): batch {t['batch_size']}, {t['threads']} threads, {t.get('mixed_precision') or 'fp32'}; warm-up "
      f"{t['warmup_steps']} steps, timed {t['steps_timed']} (tzrec) / {r['steps_timed']} (pytorch) steps")
print(f"{'':24}{'tzrec-cpp':>14}{'pytorch':>14}")
print(f"{'samples/s':24}{t['samples_per_sec']:>14,.0f}{r['samples_per_sec']:>14,.0f}   "
      f"ratio {ratio:.2f}x   (target >= {ratio_target}x)")
print(f"{'step ms (mean)':24}{t['step_ms']:>14.1f}{r['step_ms']:>14.1f}")
print(f"{'step ms (median)':24}{t['median_step_ms']:>14.1f}{r['median_step_ms']:>14.1f}   "
      f"(median ratio {r['median_step_ms'] / t['median_step_ms']:.2f}x; less sensitive to other load)")
print(f"{'eval AUC':24}{t['auc']:>14.4f}{r['auc']:>14.4f}   ({t['eval_rows']} held-out rows)")
print(f"{'model init s':24}{t['init_seconds']:>14.1f}{r['init_seconds']:>14.1f}   (not timed)")
print(f"{'peak RSS GiB':24}{gib(t['peak_rss_bytes']):>14.2f}{gib(r['peak_rss_bytes']):>14.2f}")
print(f"tzrec memory: tables {gib(t['table_bytes']):.2f} + sparse optimizer state "
      f"{gib(t['sparse_state_bytes']):.2f} + dense model {gib(t['dense_bytes']):.3f} GiB -> budget "
      f"1.25 x that + 1 GiB = {gib(t['memory_budget_bytes']):.2f} GiB: "
      f"{'PASS' if t['memory_within_budget'] else 'FAIL'}")
s = t["split_ms"]
print(f"tzrec step split (ms): data wait {s['data_wait']:.2f} | embedding forward "
      f"{s['embedding_forward']:.1f} | dense fwd+bwd+optimizer {s['dense_fwd_bwd_opt']:.1f} | "
      f"embedding backward+update {s['embedding_backward_update']:.1f} | step {t['step_ms']:.1f}")
if "dense_forward_loss" in s:
    print(f"  dense part: forward+loss {s['dense_forward_loss']:.1f} | backward+optimizer {s['dense_backward_opt']:.1f}")
s = r["split_ms"]
print(f"pytorch step split (ms): forward+loss {s['forward_loss']:.1f} | backward {s['backward']:.1f} | "
      f"sparse Adagrad step {s['sparse_step']:.1f} | dense Adam step {s['dense_step']:.1f}")
mf = t["mlp_flops_per_sample"]
if t.get("mean_steps"):
    print(f"roofline counts the Linear layers as the model is written (DIN's first attention layer on "
          f"[B, T, 4D]), T = {t['mean_steps']:.1f} padded steps on average; layers [in, out, GEMM rows]:")
print(f"roofline: MLP {mf / 1e6:.2f} MFLOP/sample (fwd+bwd) over Linear layers {t['mlp_layers']}; "
      f"torch::mm rate at these shapes {t['gemm_flops_per_sec'] / 1e9:.1f} GFLOP/s (tzrec process), "
      f"{r['gemm_flops_per_sec'] / 1e9:.1f} (pytorch process)")
tgt = f"   (target >= {roof_target}%)" if roof_target != "-" else ""
print(f"  tzrec-cpp {mf * t['samples_per_sec'] / 1e9:.1f} GFLOP/s = {t['roofline_pct']:.1f}% of roofline{tgt}; "
      f"pytorch {mf * r['samples_per_sec'] / 1e9:.1f} GFLOP/s = {r['roofline_pct']:.1f}%")
PY
}

echo "train_speed: THREADS=$THREADS QUICK=$QUICK SHAPES='$SHAPES' work dir $WORK"

if [[ " $SHAPES " == *" a "* ]]; then
  DATA_A="$WORK/criteo"
  echo "== (a) generating $NUM_ROWS + $NUM_EVAL_ROWS synthetic Criteo rows (csv + parquet)"
  for format in csv parquet; do
    "$TZREC" gen_data --output_dir "$DATA_A" --num_rows "$NUM_ROWS" --num_eval_rows "$NUM_EVAL_ROWS" \
      --seed "$SEED" --format "$format" >/dev/null
  done
  for ((round = 0; round < ROUNDS_A; round++)); do
    echo "== (a) round $((round + 1))/$ROUNDS_A: tzrec-cpp (load average $(cut -d" " -f1-3 /proc/loadavg))"
    run_json "a_tzrec_$round" "$BENCH" train --pipeline_config "$ROOT/bench/configs/deepfm_criteo_b4096.config" \
      --format parquet --train_input "$DATA_A/train.parquet" --eval_input "$DATA_A/eval.parquet" \
      --batch_size "$BATCH" --warmup_steps "$WARMUP" --threads "$THREADS"
    echo "== (a) round $((round + 1))/$ROUNDS_A: pytorch (load average $(cut -d" " -f1-3 /proc/loadavg))"
    run_json "a_ref_$round" "$PYTHON" "$ROOT/bench/train_speed_reference.py" --shape deepfm \
      --train_csv "$DATA_A/train.csv" --eval_csv "$DATA_A/eval.csv" --batch_size "$BATCH" \
      --warmup_steps "$WARMUP" --threads "$THREADS" --seed "$SEED"
  done
  pick_fastest a_tzrec "$ROUNDS_A"
  pick_fastest a_ref "$ROUNDS_A"
  summary "a: Criteo DeepFM, $NUM_ROWS train rows, one epoch" 1.3 75 "$WORK/a_tzrec.json" "$WORK/a_ref.json"
  # The same epoch through `tzrec train_eval` from the Parquet file (loader threads, parsing and
  # batching ahead of the step; checkpoints and evaluation excluded from its samples/s): target
  # >= 0.9x the in-memory step rate above. As many rounds as the in-memory figure, fastest kept.
  e2e_edit='{"train_input_path":"'$DATA_A'/train.parquet","eval_input_path":"","data_config.batch_size":'$BATCH',"train_config.save_checkpoints_steps":1000000,"train_config.log_step_count_steps":1000000}'
  for ((round = 0; round < ROUNDS_A; round++)); do
    echo "== (a) round $((round + 1))/$ROUNDS_A: tzrec-cpp train_eval from Parquet (load average $(cut -d" " -f1-3 /proc/loadavg))"
    rm -rf "$WORK/a_e2e_model"
    OMP_NUM_THREADS=$THREADS "$TZREC" train_eval --pipeline_config_path "$ROOT/bench/configs/deepfm_criteo_b4096.config" \
      --model_dir "$WORK/a_e2e_model" --edit_config_json "$e2e_edit" > "$WORK/a_e2e_$round.log" 2>&1 \
      || { tail -20 "$WORK/a_e2e_$round.log"; die "train_eval from Parquet failed"; }
  done
  "$PYTHON" - "$WORK/a_tzrec.json" "$WORK"/a_e2e_*.log <<'PY'
import json, re, sys
mem = json.load(open(sys.argv[1]))["samples_per_sec"]
runs = []
for path in sys.argv[2:]:
    m = re.search(r"training time: (.*); ([0-9.]+) samples/s", open(path).read())
    if not m:
        sys.exit("no 'training time' line in " + path)
    runs.append((float(m.group(2)), m.group(1)))
e2e, split = max(runs)
print(f"end to end from Parquet (train_eval): samples/s per round " + ", ".join(f"{r:,.0f}" for r, _ in runs))
print(f"end to end from Parquet (train_eval): {e2e:,.0f} samples/s = {e2e / mem:.2f}x the in-memory step rate "
      f"{mem:,.0f} (target >= 0.9x); {split}")
PY
  rm -rf "$WORK/a_e2e_model"
fi
if [[ " $SHAPES " == *" a "* && "$BF16" == 1 ]]; then
  # tzrec with train_config.mixed_precision "BF16" (dense part under bf16 autocast) against the
  # fp32 reference: target >= 2x, eval AUC within 0.002 of tzrec fp32.
  sed 's/^train_config {/train_config {\n  mixed_precision: "BF16"/' \
    "$ROOT/bench/configs/deepfm_criteo_b4096.config" > "$WORK/deepfm_bf16.config"
  echo "== (a) tzrec-cpp BF16 (load average $(cut -d" " -f1-3 /proc/loadavg))"
  run_json a_tzrec_bf16 "$BENCH" train --pipeline_config "$WORK/deepfm_bf16.config" \
    --format parquet --train_input "$DATA_A/train.parquet" --eval_input "$DATA_A/eval.parquet" \
    --batch_size "$BATCH" --warmup_steps "$WARMUP" --threads "$THREADS"
  "$PYTHON" - "$WORK/a_tzrec_bf16.json" "$WORK/a_tzrec.json" "$WORK/a_ref.json" <<'PY'
import json, sys
bf16, fp32, ref = (json.load(open(p)) for p in sys.argv[1:4])
ratio = bf16["samples_per_sec"] / ref["samples_per_sec"]
print(f"BF16 tzrec-cpp: {bf16['samples_per_sec']:,.0f} samples/s = {ratio:.2f}x the fp32 reference "
      f"(target >= 2x); eval AUC {bf16['auc']:.4f} vs tzrec fp32 {fp32['auc']:.4f} "
      f"(diff {bf16['auc'] - fp32['auc']:+.4f}, target within 0.002)")
PY
fi
if [[ " $SHAPES " == *" a "* ]]; then rm -rf "$DATA_A"; fi

if [[ " $SHAPES " == *" b "* ]]; then
  # Tables + Adagrad state (fp32) of one engine; the engines never run together.
  need_kb=$(( 2 * 26 * ROWS * 64 * 4 / 1024 ))
  avail_kb=$(awk '/MemAvailable/ {print $2}' /proc/meminfo)
  if (( need_kb * 12 / 10 > avail_kb )); then
    die "shape (b) with ROWS=$ROWS needs ~$(( need_kb / 1048576 )) GiB per engine, $(( avail_kb / 1048576 )) GiB available; set a smaller ROWS"
  fi
  DATA_B="$WORK/multihot"
  train_rows_b=$(( (WARMUP + STEPS_B) * BATCH ))
  echo "== (b) generating $train_rows_b + $EVAL_ROWS_B multi-hot rows (26 features, ~10 Zipf ids, $ROWS rows per table)"
  "$BENCH" gen_multihot --out_dir "$DATA_B" --train_rows "$train_rows_b" --eval_rows "$EVAL_ROWS_B" \
    --table_rows "$ROWS" --seed "$SEED"
  for ((round = 0; round < ROUNDS_B; round++)); do
    echo "== (b) round $((round + 1))/$ROUNDS_B: tzrec-cpp (load average $(cut -d" " -f1-3 /proc/loadavg))"
    run_json "b_tzrec_$round" "$BENCH" train --pipeline_config "$ROOT/bench/configs/multitower_multihot.config" \
      --format multihot --train_input "$DATA_B" --table_rows "$ROWS" --batch_size "$BATCH" \
      --warmup_steps "$WARMUP" --steps "$STEPS_B" --threads "$THREADS"
    echo "== (b) round $((round + 1))/$ROUNDS_B: pytorch (load average $(cut -d" " -f1-3 /proc/loadavg))"
    run_json "b_ref_$round" "$PYTHON" "$ROOT/bench/train_speed_reference.py" --shape multihot \
      --data_dir "$DATA_B" --table_rows "$ROWS" --batch_size "$BATCH" --warmup_steps "$WARMUP" \
      --steps "$STEPS_B" --threads "$THREADS" --seed "$SEED"
  done
  pick_fastest b_tzrec "$ROUNDS_B"
  pick_fastest b_ref "$ROUNDS_B"
  summary "b: embedding-bound MultiTower, 26 x $ROWS x 64 tables" 3 - "$WORK/b_tzrec.json" "$WORK/b_ref.json"
fi
if [[ " $SHAPES " == *" c "* ]]; then
  DATA_C="$WORK/behaviour"
  CONFIG_C="$ROOT/bench/configs/multi_tower_din_behaviour_b4096.config"
  echo "== (c) generating $NUM_ROWS_C + $NUM_EVAL_ROWS_C behaviour rows (csv + parquet)"
  for format in csv parquet; do
    "$TZREC" gen_data --dataset behaviour --output_dir "$DATA_C" --num_rows "$NUM_ROWS_C" \
      --num_eval_rows "$NUM_EVAL_ROWS_C" --seed "$SEED" --format "$format" >/dev/null
  done
  sed 's/^train_config {/train_config {\n  mixed_precision: "BF16"/' "$CONFIG_C" > "$WORK/din_bf16.config"
  for ((round = 0; round < ROUNDS_C; round++)); do
    echo "== (c) round $((round + 1))/$ROUNDS_C: tzrec-cpp (load average $(cut -d" " -f1-3 /proc/loadavg))"
    run_json "c_tzrec_$round" "$BENCH" train --pipeline_config "$CONFIG_C" \
      --format parquet --train_input "$DATA_C/train.parquet" --eval_input "$DATA_C/eval.parquet" \
      --batch_size "$BATCH" --warmup_steps "$WARMUP" --threads "$THREADS"
    echo "== (c) round $((round + 1))/$ROUNDS_C: pytorch (load average $(cut -d" " -f1-3 /proc/loadavg))"
    run_json "c_ref_$round" "$PYTHON" "$ROOT/bench/train_speed_reference.py" --shape din \
      --train_csv "$DATA_C/train.csv" --eval_csv "$DATA_C/eval.csv" --batch_size "$BATCH" \
      --warmup_steps "$WARMUP" --threads "$THREADS" --seed "$SEED" --sparse_lr 0.5 --dense_lr 0.002
    if [[ "$BF16" == 1 ]]; then
      echo "== (c) round $((round + 1))/$ROUNDS_C: tzrec-cpp BF16 (load average $(cut -d" " -f1-3 /proc/loadavg))"
      run_json "c_bf16_$round" "$BENCH" train --pipeline_config "$WORK/din_bf16.config" \
        --format parquet --train_input "$DATA_C/train.parquet" --eval_input "$DATA_C/eval.parquet" \
        --batch_size "$BATCH" --warmup_steps "$WARMUP" --threads "$THREADS"
    fi
  done
  pick_fastest c_tzrec "$ROUNDS_C"
  pick_fastest c_ref "$ROUNDS_C"
  summary "c: MultiTowerDIN, $NUM_ROWS_C train rows, one epoch" 1.5 - "$WORK/c_tzrec.json" "$WORK/c_ref.json"
  if [[ "$BF16" == 1 ]]; then
    pick_fastest c_bf16 "$ROUNDS_C"
    summary "c: MultiTowerDIN BF16 against the fp32 reference" 1.8 - "$WORK/c_bf16.json" "$WORK/c_ref.json"
    "$PYTHON" - "$WORK/c_bf16.json" "$WORK/c_tzrec.json" <<'PY'
import json, sys
bf16, fp32 = (json.load(open(p)) for p in sys.argv[1:3])
print(f"BF16 tzrec-cpp against tzrec-cpp fp32: {bf16['samples_per_sec'] / fp32['samples_per_sec']:.2f}x; eval AUC "
      f"{bf16['auc']:.4f} vs {fp32['auc']:.4f} (diff {bf16['auc'] - fp32['auc']:+.4f})")
PY
  else
    echo "(c) BF16 rounds skipped: no AVX-512 on this CPU (BF16=1 runs them)"
  fi
  rm -rf "$DATA_C"
fi
echo
echo "JSON reports: $WORK/{a,b,c}_{tzrec,ref}.json, $WORK/c_bf16.json (removed at exit unless WORK_DIR is set)"
