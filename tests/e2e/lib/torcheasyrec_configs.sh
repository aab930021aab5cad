#!/usr/bin/env bash
# Sourced by tests/e2e/torcheasyrec_configs_*_test.sh and torcheasyrec_benchmark_configs_test.sh
# with TZREC, ROOT and CONFIG_GLOBS (globs of the config names of tests/configs/torcheasyrec/ the
# script runs: two scripts split the top-level ones so that ctest -j runs the halves side by side,
# the third runs benchmark/*) set.
# TorchEasyRec's own published configs (tests/configs/torcheasyrec/, copied unchanged), run the
# way their users run them: from a working directory holding TorchEasyRec's data/test/ files
# (vocabularies, tokenizers), `tzrec gen_data --pipeline_config_path` writes their data, then each
# config this build accepts trains, exports and predicts; each it refuses is refused for `not
# supported yet:` only (tests/e2e/lib/config_run.sh). Configs that TorchEasyRec itself rejects
# must get the same config error here (KNOWN_INVALID).
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT
fail() { echo "FAIL: $*"; exit 1; }
source "$ROOT/tests/e2e/lib/config_run.sh"

# TorchEasyRec raises for these too (tzrec/models/wukong.py: "dense mlp last hidden_unit must be the
# same sparse feature dim": its example's dense_mlp ends in 128, its sparse features have dim 16).
declare -A KNOWN_INVALID=(
  [wukong_criteo]="dense_mlp.hidden_units: the last hidden unit must equal the embedding dimension"
)
# Written for USE_RTP=1 (TorchEasyRec's RTP naming: grouped sequence sub-features and their columns
# are "<sequence>_<feature>", tzrec/features/feature.py), with USE_FARM_HASH_TO_BUCKETIZE=true as
# TorchEasyRec's own tests run them. Without USE_RTP TorchEasyRec does not find these names either,
# so they must get this error; with it they train and predict from the checkpoint, and export is
# refused (TorchEasyRec's RTP serving package is not supported yet).
declare -A RTP_CONFIGS=(
  [multi_tower_din_fg_rtp_mock]="unknown feature 'click_50_seq_item_id' (group 'seq')"
  [dlrm_hstu_rtp_kuairand_1k]="unknown feature 'uih_seq_video_id' (group 'uih')"
)

# Tables too large for the suite's disk and time, trained with fewer rows: the config is checked
# unchanged (check_config), then trains, exports and predicts with these edits. TorchEasyRec's
# kuairand benchmark has two 10M-row tables of dim 256 (10 GB each in float32, and each
# checkpoint and the package would hold them).
declare -A SMALLER_TABLES=(
  [benchmark_kuairand_dlrm_hstu]=',"feature_configs[sequence_id_feature.feature_name=video_id].sequence_id_feature.num_buckets":100000,"feature_configs[sequence_id_feature.feature_name=item_video_id].sequence_id_feature.num_buckets":100000,"feature_configs[id_feature.feature_name=user_id].id_feature.num_buckets":100000'
)

# run_rtp_config NAME CONFIG: the steps above for a config written for RTP naming.
run_rtp_config() {
  local name=$1 config=$2 W="$WORK/$1"
  "$TZREC" check_config --pipeline_config_path "$W/pipeline.config" > "$W.check" 2>&1 \
    && fail "$name: accepted without USE_RTP=1, but TorchEasyRec rejects it"
  grep -qF "${RTP_CONFIGS[$name]}" "$W.check" || { cat "$W.check"; fail "$name: not the expected error without USE_RTP"; }
  local R="$WORK/rtp_$name"
  (
    export USE_RTP=1 USE_FARM_HASH_TO_BUCKETIZE=true
    "$TZREC" gen_data --pipeline_config_path "$config" --output_dir "$R" --num_rows 256 --num_eval_rows 64 \
      2> "$R.gen.log" || { cat "$R.gen.log"; fail "$name: gen_data under USE_RTP=1"; }
    "$TZREC" check_config --pipeline_config_path "$R/pipeline.config" > "$R.check" 2>&1 \
      || { cat "$R.check"; fail "$name: check_config under USE_RTP=1"; }
    train_20_steps "$name (USE_RTP=1)" "$R"
    "$TZREC" predict --pipeline_config_path "$R/model/pipeline.config" --predict_input_path "$R/eval.parquet" \
      --predict_output_path "$R/pred" 2> "$R.predict.log" || { tail -5 "$R.predict.log"; fail "$name: predict under USE_RTP=1"; }
    [[ -s "$R/pred/part-0.parquet" ]] || fail "$name: no predictions under USE_RTP=1"
    if "$TZREC" export --pipeline_config_path "$R/model/pipeline.config" --export_dir "$R/export" > "$R.export.log" 2>&1; then
      fail "$name: export under USE_RTP=1 wrote a package"
    fi
    grep -q "not supported yet: USE_RTP=1 (RTP export" "$R.export.log" || { cat "$R.export.log"; fail "$name: export refusal"; }
  ) || exit 1
  echo "$name: rejected without USE_RTP as TorchEasyRec rejects it; under USE_RTP=1 trained and predicted (export: not supported yet)"
}

cd "$WORK"
mkdir -p data/test
cp "$ROOT"/tests/data/vocab/id_vocab_* data/test/
cp "$ROOT/tests/data/tokenizer/spiece.model" data/test/
# The configs' tokenize features read data/test/tokenizer.json; the cut-down copy has the same
# format (its vocabulary covers fewer strings, which does not matter for generated text).
cp "$ROOT/tests/data/tokenizer/small_tokenizer.json" data/test/tokenizer.json

accepted=0
refused=0
invalid=0
too_large=0
configs=()
read -ra globs <<< "$CONFIG_GLOBS"  # (read: no pathname expansion of the globs themselves)
for glob in "${globs[@]}"; do
  for config in "$ROOT"/tests/configs/torcheasyrec/$glob.config; do configs+=("$config"); done
done
for config in "${configs[@]}"; do
  name=$(basename "$config" .config)
  W="$WORK/$name"
  "$TZREC" gen_data --pipeline_config_path "$config" --output_dir "$W" --num_rows 256 --num_eval_rows 64 \
    2> "$W.gen.log" || { cat "$W.gen.log"; fail "$name: gen_data"; }
  if [[ -n "${RTP_CONFIGS[$name]:-}" ]]; then
    run_rtp_config "$name" "$config"
    accepted=$((accepted + 1))
    continue
  fi
  if [[ -n "${KNOWN_INVALID[$name]:-}" ]]; then
    if "$TZREC" check_config --pipeline_config_path "$W/pipeline.config" > "$W.check" 2>&1; then
      fail "$name: accepted, but TorchEasyRec rejects it"
    fi
    grep -qF "${KNOWN_INVALID[$name]}" "$W.check" || { cat "$W.check"; fail "$name: not the expected error"; }
    invalid=$((invalid + 1))
    echo "$name: rejected as TorchEasyRec rejects it"
    continue
  fi
  # Criteo configs with 40M-row tables may not fit one process of this machine: check_config and
  # train_eval then refuse them with the planner's rule for one rank, one line naming the table,
  # before allocating anything (train/embedding_sharding.h, check_tables_fit_one_process).
  if ! "$TZREC" check_config --pipeline_config_path "$W/pipeline.config" > "$W.check" 2>&1 &&
     grep -q "^embedding table '.*' needs .* bytes" "$W.check"; then
    if "$TZREC" train_eval --pipeline_config_path "$W/pipeline.config" --model_dir "$W/model" > "$W.train.log" 2>&1; then
      fail "$name: check_config says its tables do not fit one process, but train_eval ran"
    fi
    grep -q "^error: embedding table '.*' needs .* bytes" "$W.train.log" || { tail -3 "$W.train.log"; fail "$name: train_eval"; }
    too_large=$((too_large + 1))
    echo "$name: valid; too large for one process here ($(grep -o "table '[^']*' needs [0-9]* bytes ([^)]*)" "$W.check"))"
    continue
  fi
  run_generated_config "$name" "$W" "${SMALLER_TABLES[$name]:-}"
  [[ -n "${SMALLER_TABLES[$name]:-}" ]] && echo "  ($name: trained with the smaller tables of SMALLER_TABLES)"
  if [[ $RUN_RESULT == accepted ]]; then accepted=$((accepted + 1)); else refused=$((refused + 1)); fi
done
echo "accepted $accepted (+ $too_large too large to train here), refused $refused, invalid $invalid"
echo "torcheasyrec configs $CONFIG_GLOBS: OK"
