#!/usr/bin/env bash
# One config contract: each bad config below is refused by `tzrec check_config` and by
# `tzrec train_eval` with the same message (check_config builds what train_eval builds before
# reading data), train_eval ends with one "error:" line and status 1 — never "internal error".
set -uo pipefail
TZREC=$1
ROOT=$2
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT
fail() { echo "FAIL: $*"; exit 1; }

"$TZREC" gen_data --output_dir "$WORK/data" --num_rows 200 --num_eval_rows 50 --format parquet > /dev/null 2>&1 \
  || fail "gen_data"
"$TZREC" gen_data --output_dir "$WORK/data" --num_rows 200 --num_eval_rows 50 > /dev/null 2>&1 || fail "gen_data csv"
DEEPFM=$ROOT/examples/deepfm_criteo_synth.config
DLRM=$ROOT/examples/dlrm_criteo_synth.config
FG=$ROOT/examples/multi_tower_criteo_synth_fg.config

n=0
# expect_same <name> <base config> <sed script> <message part>
expect_same() {
  local name=$1 base=$2 script=$3 part=$4
  local cfg=$WORK/$name.config
  sed -e "$script" "$base" > "$cfg"
  cmp -s "$cfg" "$base" && fail "$name: the sed script changed nothing"
  "$TZREC" check_config --pipeline_config_path "$cfg" > "$WORK/check.out" 2> "$WORK/check.err"
  [[ $? -eq 1 ]] || { cat "$WORK/check.out" "$WORK/check.err"; fail "$name: check_config did not exit 1"; }
  local problem
  problem=$(grep -F -- "$part" "$WORK/check.out" | head -1)
  [[ -n $problem ]] || { cat "$WORK/check.out"; fail "$name: check_config did not report '$part'"; }
  local data_flags=(--train_input_path "$WORK/data/train.parquet" --eval_input_path "$WORK/data/eval.parquet")
  [[ $base == "$FG" ]] && data_flags=(--train_input_path "$WORK/data/train.csv" --eval_input_path "$WORK/data/eval.csv")
  "$TZREC" train_eval --pipeline_config_path "$cfg" --model_dir "$WORK/model_$name" "${data_flags[@]}" \
    > "$WORK/train.out" 2> "$WORK/train.err"
  local rc=$?
  [[ $rc -eq 1 ]] || { tail -3 "$WORK/train.err"; fail "$name: train_eval exited $rc, not 1"; }
  local last
  last=$(grep -v '^\[20' "$WORK/train.err" | tail -1)
  [[ $last == error:* ]] || { tail -3 "$WORK/train.err"; fail "$name: train_eval's last line is not 'error: ...'"; }
  [[ $last == *"$problem"* ]] || fail "$name: train_eval said '$last', check_config said '$problem'"
  n=$((n + 1))
}

expect_same use_bn_and_ln "$DEEPFM" 's/hidden_units: \[512, 256, 128\]/hidden_units: [512, 256, 128] use_bn: true use_ln: true/' \
  "use_bn and use_ln cannot both be true"
expect_same empty_hidden_units "$DEEPFM" 's/hidden_units: \[64\]/hidden_units: [64, 0]/' "hidden_units[1]: must be > 0"
expect_same dropout_count "$DEEPFM" 's/hidden_units: \[512, 256, 128\]/hidden_units: [512, 256, 128] dropout_ratio: [0.1, 0.2]/' \
  "dropout_ratio: has 2 values"
expect_same clipping "$DEEPFM" 's/^  num_epochs: 1$/  num_epochs: 1\n  grad_clipping { clipping_type: "norm" max_gradient: -1 }/' \
  "max_gradient: must be a finite value >= 0"
expect_same grad_scaler "$DEEPFM" 's/^  num_epochs: 1$/  num_epochs: 1\n  mixed_precision: "FP16"\n  grad_scaler { init_scale: -1 }/' \
  "init_scale: must be > 0"
expect_same dlrm_widths "$DLRM" 's/hidden_units: \[64, 32, 16\]/hidden_units: [64, 32, 8]/' "dense_mlp"
expect_same normalizer "$FG" '0,/normalizer: "method=minmax,min=0,max=100"/s//normalizer: "method=minmax,min=0"/' \
  "normalizer"
expect_same lr_schedule "$DEEPFM" '0,/    constant_learning_rate {/s//    exponential_decay_learning_rate { decay_size: 0 decay_factor: 0.5/' \
  "decay_size"
expect_same clipping_type "$DEEPFM" 's/^  num_epochs: 1$/  num_epochs: 1\n  grad_clipping { clipping_type: "bogus" }/' \
  "clipping_type: must be norm, value or none"
expect_same weight_decay "$DEEPFM" 's/    adam_optimizer {/    adam_optimizer { weight_decay: -1/' "invalid weight_decay -1"
expect_same normalizer_expression "$FG" \
  '0,/normalizer: "method=minmax,min=0,max=100"/s//normalizer: "method=expression,expr=log(y+1)"/' \
  "feature_configs[1].raw_feature.normalizer: normalizer expression"
expect_same manual_step "$DEEPFM" \
  '0,/    constant_learning_rate {/s//    manual_step_learning_rate { schedule_sizes: [10, 5] learning_rates: [0.1, 0.01]/' \
  "schedule_sizes must be non-decreasing, got 5 after 10"
expect_same activation "$DEEPFM" 's/      hidden_units: \[64\]/      hidden_units: [64] activation: "nn.Bogus"/' \
  "unknown activation class nn.Bogus"
expect_same mixed_precision "$DEEPFM" 's/^  num_epochs: 1$/  num_epochs: 1\n  mixed_precision: "FP8"/' \
  "train_config.mixed_precision: 'FP8' is not a precision; use \"BF16\" or \"FP16\""
expect_same summaries "$DEEPFM" 's/^  num_epochs: 1$/  num_epochs: 1\n  tensorboard_summaries: "bogus"/' \
  "unknown summary 'bogus'"
# Feature groups, model structure, losses and metrics (checked where the model is built).
expect_same unknown_group_feature "$DEEPFM" '0,/    feature_names: "cat_25"/s//    feature_names: "cat_99"/' \
  "model_config.feature_groups[0].feature_names[25]: unknown feature 'cat_99' (group 'wide')"
expect_same dense_in_wide "$DEEPFM" '0,/    feature_names: "cat_25"/s//    feature_names: "int_0"/' \
  "WIDE group needs sparse features (id_feature, or raw_feature with boundaries), 'int_0' is dense"
expect_same duplicate_group "$DEEPFM" '0,/    group_name: "fm"/s//    group_name: "wide"/' \
  "model_config.feature_groups[1].group_name: duplicate group name 'wide' (also model_config.feature_groups[0])"
expect_same group_type "$DEEPFM" '0,/    group_type: WIDE/s//    group_type: DEEP/' \
  "model_config.feature_groups[0].group_type: DeepFM group 'wide' must be WIDE"
expect_same fm_dims "$DEEPFM" '0,/    embedding_dim: 16/s//    embedding_dim: 8/' "FM needs equal embedding_dim"
expect_same wide_dim "$DEEPFM" 's/^  deepfm {$/  deepfm {\n    wide_embedding_dim: 0/' \
  "model_config.deepfm.wide_embedding_dim: must be > 0"
expect_same grouping_key "$DEEPFM" 's/^  metrics {$/  metrics { grouped_auc { grouping_key: "user" } }\n  metrics {/' \
  "model_config.metrics[0].grouped_auc.grouping_key: unknown feature 'user'"
expect_same dense_grouping_key "$DEEPFM" 's/^  metrics {$/  metrics { grouped_auc { grouping_key: "int_0" } }\n  metrics {/' \
  "'int_0' is a dense feature; the key is the first id of a sparse feature"
expect_same num_class "$DEEPFM" 's/^  deepfm {$/  num_class: 2\n  deepfm {/' \
  "model_config.num_class: must be 1 with loss binary_cross_entropy, got 2"
expect_same label_smoothing "$DEEPFM" 's/^    binary_cross_entropy {$/    binary_cross_entropy { label_smoothing: 2/' \
  "binary_cross_entropy.label_smoothing: must be in [0, 1]"
expect_same part_regex "$DEEPFM" '0,/    adam_optimizer {/s//    part_optimizers { regex_pattern: "(" adam_optimizer {} }\n    adam_optimizer {/' \
  "part_optimizers[0].regex_pattern: '(' is not a valid regular expression"
# Sequence features (checked where the features are built).
expect_same sequence_value_dim "$DEEPFM" 's/^model_config {$/feature_configs { sequence_id_feature { feature_name: "hist" embedding_dim: 4 num_buckets: 10 value_dim: 2 } }\nmodel_config {/' \
  "feature_configs[39].sequence_id_feature.value_dim: 2 for a sequence id feature"
expect_same dense_sequence_in_deep "$DEEPFM" 's/^model_config {$/feature_configs { sequence_raw_feature { feature_name: "ts" } }\nmodel_config {/; 0,/    feature_names: "int_0"/s//    feature_names: "int_0"\n    feature_names: "ts"/' \
  "'ts' is a dense sequence feature (value_dim numbers per item); it has no one value per row for a DEEP group"
# Sequence groups and encoders of DEEP groups (checked where the embedding group is built).
SEQ='s/^model_config {$/feature_configs { sequence_feature { sequence_name: "hist" sequence_length: 5 features { id_feature { feature_name: "cat_0" num_buckets: 100 embedding_dim: 16 } } } }\nmodel_config {/'
expect_same encoders_without_groups "$DEEPFM" "$SEQ"'; 0,/    group_name: "deep"/s//    group_name: "deep"\n    sequence_encoders { pooling_encoder {} }/' \
  "group 'deep' has sequence_encoders but no sequence_groups for them to read"
expect_same encoder_input "$DEEPFM" "$SEQ"'; 0,/    group_name: "deep"/s//    group_name: "deep"\n    sequence_groups { feature_names: "hist__cat_0" }\n    sequence_encoders { pooling_encoder { input: "click" } }/' \
  "sequence_encoders[0].input: 'click' is not a sequence group of group 'deep'; use one of: deep"
expect_same din_encoder_mlp "$DEEPFM" "$SEQ"'; 0,/    group_name: "deep"/s//    group_name: "deep"\n    sequence_groups { feature_names: "hist__cat_0" }\n    sequence_encoders { din_encoder { } }/' \
  "sequence_encoders[0].din_encoder.attn_mlp: required"
# Tables that do not fit one process (10^12 rows: 64 TB of weights, 64 TB of adagrad state) are
# refused before they are allocated, by the planner's rule for one rank (train/embedding_sharding.h).
expect_same huge_table "$DEEPFM" '0,/    num_buckets: 20000/s//    hash_bucket_size: 1000000000000/' \
  "embedding table 'cat_2_emb' needs 128000000000000 bytes (119209.3 GiB: weights 64000000000000 + optimizer state 64000000000000)"
# ... at once, before any data is read (the input does not exist), in one line besides the log.
timeout 60 "$TZREC" train_eval --pipeline_config_path "$WORK/huge_table.config" --model_dir "$WORK/model_huge" \
  --train_input_path "$WORK/missing.parquet" > /dev/null 2> "$WORK/train.err"
rc=$?
[[ $rc -eq 1 ]] || { tail -3 "$WORK/train.err"; fail "huge_table: train_eval exited $rc, not 1"; }
[[ $(grep -vc '^\[20' "$WORK/train.err") -eq 1 ]] || { cat "$WORK/train.err"; fail "huge_table: not one error line"; }
grep -q "^error: embedding table 'cat_2_emb' needs .* add ranks (\`tzrec launch" "$WORK/train.err" \
  || { cat "$WORK/train.err"; fail "huge_table: not the memory error"; }
# Fields the registry refuses (docs/architecture.md, "The config contract").
expect_same registry_refused "$DEEPFM" 's/^  num_epochs: 1$/  num_epochs: 1\n  delta_embedding_dump_config {\n    feature_store_config { region: "r" }\n  }/' \
  "not supported yet: train_config.delta_embedding_dump_config.feature_store_config"
# Batches cut by cost need the cost column; input_fields_str items are checked for any dataset.
expect_same cost_without_field "$DEEPFM" 's/^  num_workers: 2$/  num_workers: 2\n  batch_cost_size: 100/' \
  "data_config.batch_cost_size: needs data_config.sample_cost_field"
expect_same input_fields_str_type "$DEEPFM" 's/^  num_workers: 2$/  num_workers: 2\n  input_fields_str: "label:BIGINT;c0:BOOL"/' \
  "data_config.input_fields_str: 'c0:BOOL': unknown field type 'BOOL'"
# Both DEEP groups suffixed "wide": their tables "<emb>_wide" are the wide group's unsuffixed ones.
expect_same suffix_collision "$DEEPFM" 's/^    group_type: DEEP$/    group_type: DEEP\n    embedding_name_suffix: "wide"/' \
  "looks up embedding table 'cat_0_emb_wide' with embedding_name_suffix 'wide', and so does feature 'cat_0' of model_config.feature_groups[0]"
# A field without meaning here is accepted with one warning that says why.
sed 's/^  num_epochs: 1$/  num_epochs: 1\n  cuda_matmul_allow_tf32: true/' "$DEEPFM" > "$WORK/warned.config"
"$TZREC" check_config --pipeline_config_path "$WORK/warned.config" > "$WORK/check.out" 2> "$WORK/check.err" \
  || { cat "$WORK/check.out" "$WORK/check.err"; fail "check_config refused cuda_matmul_allow_tf32"; }
[[ $(grep -c "train_config.cuda_matmul_allow_tf32: accepted and ignored: CUDA only" "$WORK/check.err") -eq 1 ]] \
  || { cat "$WORK/check.err"; fail "no single warning for cuda_matmul_allow_tf32"; }
echo "config_contract_test: OK ($n bad configs, same message from check_config and train_eval)"
