#!/usr/bin/env bash
# HSTU attention and STU stack: tzrec-cpp (bench/hstu_bench.cc: hstu_mha's fused kernel inside
# gr::STUStack) next to plain PyTorch eager (bench/hstu_reference.py: TorchEasyRec's STU layer with
# the padded pytorch_hstu_mha) on the same workload: batch 128, history lengths uniform in [1, 512]
# (and, with FULL=1, all 512) plus 8 targets, 4 STU layers, 2 heads, dim 128, fp32, training mode.
# Rounds alternate the engines (C++, then Python, ROUNDS times); each engine's per-round medians
# are printed and the medians over rounds compared. Then the peak-memory runs, one fresh process
# each (see the header of hstu_bench.cc for the method). Figures only: the exit status says nothing
# about targets (step time ratio ≤ 0.6, attention memory ratio ≤ 1/4).
#
# Usage: bench/hstu_speed.sh
# Environment (all optional):
#   BUILD_DIR=build          holds tzrec_hstu_bench (-DTZREC_BUILD_BENCH=ON)
#   PYTHON=/usr/bin/python3  Debian python with torch
#   THREADS=2                torch threads / OMP_NUM_THREADS of both engines
#   ROUNDS=3 STEPS=3 WARMUP=1   rounds; timed and untimed steps per engine run
#   FULL=1                   also the all-512 histories (FULL_ROUNDS=2 rounds)
#   QUICK=0                  1: batch 16, 1 round, 1 step (smoke test)
#   WAIT_POLICY=PASSIVE      OMP_WAIT_POLICY of both engines. On a shared machine a spinning
#                            OpenMP thread whose partner lost its core burns whole time slices at
#                            every parallel region (measured: 10-60x slower steps with libgomp's
#                            default while other jobs ran); empty: libgomp's default
#   LOCK_FILE=               if set, every engine run holds `flock LOCK_FILE` (keeps other jobs
#                            that take the same lock, e.g. builds, off a shared machine meanwhile)
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
BUILD_DIR="${BUILD_DIR:-$ROOT/build}"
BENCH="${BENCH:-$BUILD_DIR/tzrec_hstu_bench}"
PYTHON="${PYTHON:-/usr/bin/python3}"
THREADS="${THREADS:-2}"
ROUNDS="${ROUNDS:-3}"
STEPS="${STEPS:-3}"
WARMUP="${WARMUP:-1}"
FULL="${FULL:-1}"
FULL_ROUNDS="${FULL_ROUNDS:-2}"
QUICK="${QUICK:-0}"
LOCK_FILE="${LOCK_FILE:-}"
WAIT_POLICY="${WAIT_POLICY-PASSIVE}"
COMMON=(--threads "$THREADS")
if [[ "$QUICK" == 1 ]]; then
  COMMON+=(--batch 16)
  ROUNDS=1; FULL_ROUNDS=1; STEPS=1; WARMUP=0
fi
export OMP_NUM_THREADS="$THREADS"
if [[ -n "$WAIT_POLICY" ]]; then export OMP_WAIT_POLICY="$WAIT_POLICY"; fi

[[ -x "$BENCH" ]] || { echo "missing $BENCH (configure with -DTZREC_BUILD_BENCH=ON)" >&2; exit 1; }
OUT="$(mktemp -d)"
trap 'rm -rf "$OUT"' EXIT

run() {  # run <json-lines file> <command...>
  local file="$1"; shift
  if [[ -n "$LOCK_FILE" ]]; then
    flock "$LOCK_FILE" "$@" | tee -a "$file"
  else
    "$@" | tee -a "$file"
  fi
}

speed_rounds() {  # speed_rounds <tag> <rounds> [extra args]
  local tag="$1" rounds="$2"; shift 2
  for ((r = 1; r <= rounds; r++)); do
    echo "== $tag round $r/$rounds"
    run "$OUT/$tag.cpp" "$BENCH" --mode speed --steps "$STEPS" --warmup "$WARMUP" "${COMMON[@]}" "$@"
    run "$OUT/$tag.py" "$PYTHON" "$ROOT/bench/hstu_reference.py" --mode speed --steps "$STEPS" --warmup "$WARMUP" \
      "${COMMON[@]}" "$@"
  done
}

speed_rounds variable "$ROUNDS"
if [[ "$FULL" == 1 ]]; then speed_rounds full "$FULL_ROUNDS" --full; fi
echo "== C++ attention in bfloat16 (no Python counterpart: CPU bf16 einsum in libtorch 1.13 is a slow fallback)"
run "$OUT/bf16.cpp" "$BENCH" --mode speed --layers 0 --steps "$STEPS" --warmup "$WARMUP" --bf16 "${COMMON[@]}"
echo "== peak memory (fresh process each)"
for mode in memory_attention memory_step; do
  run "$OUT/$mode.cpp" "$BENCH" --mode "$mode" "${COMMON[@]}"
  run "$OUT/$mode.py" "$PYTHON" "$ROOT/bench/hstu_reference.py" --mode "$mode" "${COMMON[@]}"
done

"$PYTHON" - "$OUT" "$FULL" <<'EOF'
import json, statistics, sys
out, full = sys.argv[1], sys.argv[2] == "1"

def load(name):
    with open(f"{out}/{name}") as f:
        return [json.loads(line) for line in f if line.startswith("{")]

def med(rows, key):
    return statistics.median(r[key] for r in rows)

print("\n== summary (medians over rounds of each run's median; ratio: median of the rounds' C++ / PyTorch)")
for tag in ["variable"] + (["full"] if full else []):
    c, p = load(f"{tag}.cpp"), load(f"{tag}.py")
    print(f"{tag} lengths ({c[0]['tokens']} tokens, {len(c)} rounds):")
    for key, label in [("step_ms_median", "STU stack step (fwd+bwd)"), ("attn_fwd_ms_median", "attention fwd"),
                       ("attn_fwd_bwd_ms_median", "attention fwd+bwd")]:
        cm, pm = med(c, key), med(p, key)
        ratios = [x[key] / y[key] for x, y in zip(c, p)]
        print(f"  {label:26s} C++ {cm:9.1f} ms   PyTorch {pm:9.1f} ms   ratio {statistics.median(ratios):.3f}"
              f"  (rounds: {', '.join(f'{r:.3f}' for r in ratios)})")
b = load("bf16.cpp")
print(f"C++ attention bf16: fwd {med(b, 'attn_fwd_ms_median'):.1f} ms, fwd+bwd {med(b, 'attn_fwd_bwd_ms_median'):.1f} ms")
for mode, label in [("memory_attention", "attention fwd+bwd"), ("memory_step", "STU stack step")]:
    c, p = load(f"{mode}.cpp")[0], load(f"{mode}.py")[0]
    print(f"peak RSS delta, {label:18s} C++ {c['peak_delta_mib']:8.1f} MiB   PyTorch {p['peak_delta_mib']:8.1f} MiB"
          f"   ratio {c['peak_delta_mib'] / p['peak_delta_mib']:.3f}")
EOF
