#!/usr/bin/env bash
# User errors end with one "error:" line and a non-zero exit status.
set -uo pipefail
TZREC=$1
ROOT=$2
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT
fail() { echo "FAIL: $*"; exit 1; }

expect_error() {  # expect_error <pattern> <args...>
  local pattern=$1; shift
  "$TZREC" "$@" > "$WORK/out" 2> "$WORK/err"
  local rc=$?
  [[ $rc -ne 0 ]] || fail "'$*' exited 0"
  grep -q -- "$pattern" "$WORK/err" "$WORK/out" || { cat "$WORK/err"; fail "'$*' did not report '$pattern'"; }
}

expect_exit() {  # expect_exit <status> <exact stderr line pattern> <args...>: one line, that status
  local want=$1 pattern=$2; shift 2
  "$TZREC" "$@" > "$WORK/out" 2> "$WORK/err"
  local rc=$?
  [[ $rc -eq $want ]] || { cat "$WORK/err"; fail "'$*' exited $rc, not $want"; }
  [[ $(wc -l < "$WORK/err") -eq 1 ]] || { cat "$WORK/err"; fail "'$*' printed more than one line"; }
  grep -q -- "$pattern" "$WORK/err" || { cat "$WORK/err"; fail "'$*' did not report '$pattern'"; }
}

expect_error "pipeline_config_path" train_eval
# Command-line mistakes: one "error:" line, exit status 2, a suggestion for typos.
CFG=$ROOT/examples/deepfm_criteo_synth.config
expect_exit 2 "^error: tzrec train_eval: unknown flag --fine_tune_checkpiont; did you mean --fine_tune_checkpoint?" \
  train_eval --pipeline_config_path "$CFG" --fine_tune_checkpiont x
expect_exit 2 "unknown flag --model-dir; did you mean --model_dir?" eval --pipeline_config_path "$CFG" --model-dir=x
expect_exit 2 "unknown flag --frobnicate (see tzrec predict --help)" predict --frobnicate
expect_exit 2 "unexpected argument 'extra'" check_config --pipeline_config_path "$CFG" extra
expect_exit 2 "^error: tzrec: unknown command 'trian_eval'; did you mean train_eval?" trian_eval
expect_exit 2 "^error: tzrec train_eval: --pipeline_config_path is required" train_eval
expect_exit 2 "^error: tzrec gen_data: " gen_data --output_dir "$WORK/g" --num_rows notanumber
# TorchEasyRec flags accepted on purpose: one warning each, listed in --help.
grep -q -- "--local_rank" <<< "$("$TZREC" check_config --help)" && fail "check_config lists --local_rank"
grep -q -- "--local_rank" <<< "$("$TZREC" train_eval --help)" || fail "train_eval --help does not list --local_rank"
"$TZREC" eval --pipeline_config_path "$WORK/missing.config" --local_rank=1 > /dev/null 2> "$WORK/err"
[[ $(grep -c "ignoring --local_rank" "$WORK/err") -eq 1 ]] || { cat "$WORK/err"; fail "no single warning for --local_rank"; }
expect_error "missing.config" train_eval --pipeline_config_path "$WORK/missing.config"
# A GEMM route that does not exist (src/blas/sgemm_bridge.h): one line, before any work.
TZREC_GEMM=mkl expect_exit 2 "^error: TZREC_GEMM=mkl: not a GEMM route; unset it (oneDNN) or set it to blas" \
  train_eval --pipeline_config_path "$CFG" --model_dir "$WORK/gemm_model"
[[ ! -e "$WORK/gemm_model" ]] || fail "TZREC_GEMM=mkl: train_eval wrote a model_dir"
printf 'model_dir: "x"\nbogus_field: 1\n' > "$WORK/unknown.config"
expect_error "unknown.config:2:" check_config --pipeline_config_path "$WORK/unknown.config"
# A model this build refuses (the model oneof's last member set wins in text format).
{ cat "$ROOT/examples/deepfm_criteo_synth.config"; echo 'model_config { simple_multi_task {} }'; } > "$WORK/refused.config"
expect_error "not supported yet: model_config.simple_multi_task" check_config --pipeline_config_path "$WORK/refused.config"
expect_error "not supported yet: model_config.simple_multi_task" train_eval --pipeline_config_path "$WORK/refused.config"
"$TZREC" check_config --pipeline_config_path "$ROOT/examples/deepfm_criteo_synth.config" > "$WORK/ok" \
  || fail "check_config rejects the example"
# A normalizer under FG_NONE is valid but not applied: a warning says so.
sed -e '0,/feature_name: "int_0"/s//feature_name: "int_0"\n    normalizer: "method=log10"/' \
  "$ROOT/examples/deepfm_criteo_synth.config" > "$WORK/normalizer.config"
grep -q 'method=log10' "$WORK/normalizer.config" || fail "could not add a normalizer to the example"
"$TZREC" check_config --pipeline_config_path "$WORK/normalizer.config" > "$WORK/ok" 2> "$WORK/warn" \
  || { cat "$WORK/warn"; fail "check_config rejects a normalizer under FG_NONE"; }
grep -q 'normalizer is not applied with data_config.fg_mode FG_NONE' "$WORK/warn" \
  || { cat "$WORK/warn"; fail "no warning for a normalizer under FG_NONE"; }
for sub in train_eval eval check_config gen_data; do
  "$TZREC" "$sub" --help > "$WORK/help" || fail "$sub --help failed"
  grep -q -- "--" "$WORK/help" || fail "$sub --help printed no flags"
done
# A bad data row names the file and line.
mkdir -p "$WORK/data"
"$TZREC" gen_data --output_dir "$WORK/data" --num_rows 100 --num_eval_rows 10 > /dev/null 2>&1 || fail "gen_data"
sed -i '5s/^[01],/x,/' "$WORK/data/train.csv"
EDIT='{"train_input_path":"'$WORK'/data/train.csv","eval_input_path":"'$WORK'/data/eval.csv","data_config.dataset_type":"CsvDataset","data_config.with_header":true}'
expect_error "train.csv line 5" train_eval --pipeline_config_path "$ROOT/examples/deepfm_criteo_synth.config" \
  --model_dir "$WORK/model" --edit_config_json "$EDIT"
echo OK
