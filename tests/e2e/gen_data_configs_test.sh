#!/usr/bin/env bash
# `tzrec gen_data --pipeline_config_path` on every config under examples/ and
# tests/configs/gen_data/: the data, sampler tables and pipeline.config are written with the
# columns each config reads; configs this build accepts then train a few steps, export and
# predict on the generated data; configs it refuses fail on `not supported yet:` only (never on
# the data).
set -euo pipefail
TZREC=$1
ROOT=$2
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT
fail() { echo "FAIL: $*"; exit 1; }
source "$ROOT/tests/e2e/lib/config_run.sh"

# Columns (and, after '=', Parquet leaf types) each test config must get.
declare -A EXPECTED=(
  [deepfm_fg_normal]="user_id=INT64 age_level=INT64 gender=BYTE_ARRAY city=BYTE_ARRAY item_id=INT64 tags.list.element=INT64 price=FLOAT ctr=FLOAT clk=INT64"
  [multi_tower_fg_dag]="uid age iid pic_emb.list.element=FLOAT sales=FLOAT click=INT64"
  [mmoe_fg_none]="user_id=INT64 item_id=INT64 tags.list.element=INT64 tag_weights=BYTE_ARRAY price=INT64 ctr=FLOAT clk=INT64 buy=INT64 w=FLOAT"
  [dbmtl_regression_fg_none]="uid=INT64 cate=INT64 emb.list.element=FLOAT clk=INT64 level=INT64 dwell=FLOAT w_ctr=FLOAT"
  [softmax_multiclass]="uid query_terms.list.element score class_id=INT64"
  [l2_regression]="uid vid duration watch_time=FLOAT"
  [multi_tower_din_seq]="user_id item_id cate click_seq__item_id=BYTE_ARRAY click_seq__cate=BYTE_ARRAY click_seq__ts=BYTE_ARRAY clk"
  [sequence_fg_none]="item_id his__item_id=BYTE_ARRAY his__price=BYTE_ARRAY query_seq=BYTE_ARRAY pos_seq=BYTE_ARRAY clk"
  [multi_tower_seq_encoders]="user_id item_id cate click__item_id=BYTE_ARRAY click__cate=BYTE_ARRAY buy__item_id=BYTE_ARRAY clk"
  [dbmtl_has_sequence_mock]="id_1 id_2 id_3 id_4 id_5 raw_1 raw_2=FLOAT raw_3.list.element=FLOAT click_50_seq__id_2=BYTE_ARRAY click_50_seq__raw_2=BYTE_ARRAY buy_50_seq__id_3=BYTE_ARRAY clk buy"
  [sequence_pooled_fg_none]="item_id his__item_id=BYTE_ARRAY his__tag=BYTE_ARRAY query_seq=BYTE_ARRAY clk"
  [dssm_negative_sampler]="user_id age item_id=INT64 cate price clk"
  [dssm_v2_hard_negative]="user_id=INT64 item_id=INT64 brand clk"
  [dssm_v2_force_base]="user_id=INT64 item_id=INT64 brand clk"
  [mind_negative_sampler]="user_id age item_id cate click_seq__item_id=BYTE_ARRAY click_seq__cate=BYTE_ARRAY clk"
  [dat_negative_sampler]="user_id=INT64 user_age=INT64 item_id=INT64 item_cate=INT64 item_raw=INT64 clk"
  [rocket_launching]="user_id=INT64 item_id=INT64 cate=INT64 tags.list.element=INT64 price=FLOAT clk=INT64"
  [fg_combo_lookup_match]="cate=INT64 age=INT64 kv_cate_cnt=BYTE_ARRAY kv_cate_ctr=BYTE_ARRAY kv_cate_vec=BYTE_ARRAY kv_cate_tag=BYTE_ARRAY kkv_cate_brand=BYTE_ARRAY brand=INT64 click__cate=BYTE_ARRAY clk"
  [fg_expr]="cate=INT64 u_age=FLOAT i_age=FLOAT u_lng=FLOAT u_lat=FLOAT i_lng=FLOAT i_lat=FLOAT clicks=FLOAT views=FLOAT hist_price=BYTE_ARRAY i_price=FLOAT click__cate=BYTE_ARRAY click__price=BYTE_ARRAY clk"
  [dense_embedding]="uid age price=FLOAT ctr pic_emb.list.element=FLOAT sales kv_cate_ctr=BYTE_ARRAY u_age i_age iid cate clk"
  [fg_bucketize]="user_id gender=BYTE_ARRAY age=FLOAT price=FLOAT age_x_cate cate_cnt=FLOAT cate_brand_hit clk"
  [tdm]="user_id=INT64 age item_id=INT64 cate brand click_seq__item_id=BYTE_ARRAY click_seq__cate=BYTE_ARRAY clk"
  [dlrm_hstu_kuairand_synth]="user_id=INT64 user_active_degree=INT64 uih_seq__video_id=BYTE_ARRAY uih_seq__action_timestamp=BYTE_ARRAY uih_seq__action_weight=BYTE_ARRAY uih_seq__watch_time=BYTE_ARRAY cand_seq__video_id=BYTE_ARRAY cand_seq__query_time=BYTE_ARRAY cand_seq__action_weight.list.element=INT64 cand_seq__watch_time.list.element=INT64"
  [hstu_match_kuairand_synth]="user_id=INT64 user_active_degree=INT64 uih_seq__video_id=BYTE_ARRAY uih_seq__action_timestamp=BYTE_ARRAY cand_seq__video_id=BYTE_ARRAY request_time cand_seq__action_weight.list.element=INT64"
  [fg_seq_expr]="cate=INT64 ulng=FLOAT ulat=FLOAT ilng=FLOAT ilat=FLOAT cur_time=FLOAT clk_time_seq=BYTE_ARRAY click__cate=BYTE_ARRAY click__clk_time=BYTE_ARRAY clk"
  [fg_features_dag]="cate age kv_cate_cnt=BYTE_ARRAY kv_cate_vec kv_age_ctr kkv_cate_brand=BYTE_ARRAY brand u_age i_age query title title_text doc_kv query_kv click_items.list.element click_valid.list.element events=BYTE_ARRAY clk"
)
# Sampler tables each test config must get.
declare -A TABLES=(
  [dssm_negative_sampler]="sampler_item.txt"
  [hstu_match_kuairand_synth]="sampler_item.txt items.parquet"
  [dat_negative_sampler]="sampler_item.txt"
  [mind_negative_sampler]="sampler_item.txt"
  [dssm_v2_hard_negative]="sampler_item.txt sampler_user.txt sampler_pos_edge.txt sampler_hard_neg_edge.txt"
  [dssm_v2_force_base]="sampler_item.txt sampler_user.txt sampler_pos_edge.txt sampler_hard_neg_edge.txt"
  [tdm]="tdm_items.csv tdm_tree/node_table.txt tdm_tree/edge_table.txt tdm_tree/predict_edge_table.txt tdm_tree/node_feature/part-0.parquet"
)

# The columns of the examples: label and the feature names (FG_NONE) or input names (FG_NORMAL).
example_columns() {
  local config=$1
  if grep -q "fg_mode: FG_NORMAL" "$config"; then
    sed -n 's/.*expression: "[a-z]*:\([^"]*\)".*/\1/p' "$config"
  else
    sed -n 's/.*feature_name: "\([^"]*\)".*/\1/p' "$config"
  fi
  sed -n 's/.*label_fields: "\([^"]*\)".*/\1/p' "$config"
}

accepted=0
refused=0
for config in "$ROOT"/examples/*.config "$ROOT"/tests/configs/gen_data/*.config; do
  name=$(basename "$config" .config)
  W="$WORK/$name"
  "$TZREC" gen_data --pipeline_config_path "$config" --output_dir "$W" --num_rows 512 --num_eval_rows 128 \
    2> "$W.gen.log" || { cat "$W.gen.log"; fail "$name: gen_data"; }
  for f in train.parquet eval.parquet pipeline.config ${TABLES[$name]:-}; do
    [[ -s "$W/$f" ]] || fail "$name: no $f"
  done
  "$TZREC" parquet_meta "$W/train.parquet" > "$W.meta"
  grep -q "^rows: 512$" "$W.meta" || fail "$name: train.parquet does not have 512 rows"
  if [[ -n "${EXPECTED[$name]:-}" ]]; then
    expected="${EXPECTED[$name]}"
  else
    expected=$(example_columns "$config" | tr '\n' ' ')
  fi
  for want in $expected; do
    column=${want%%=*}
    type=""
    [[ "$want" == *=* ]] && type=${want#*=}
    grep -qE "^  ${column}: ${type}" "$W.meta" || { cat "$W.meta"; fail "$name: no column $column ${type}"; }
  done
  grep -q "train_input_path: \"$W/train.parquet\"" "$W/pipeline.config" || fail "$name: train_input_path not rewritten"
  grep -q "dataset_type: ParquetDataset" "$W/pipeline.config" || fail "$name: dataset_type not ParquetDataset"
  if grep -q "odps://" "$W/pipeline.config"; then fail "$name: odps:// path left in pipeline.config"; fi

  run_generated_config "$name" "$W"
  if [[ $RUN_RESULT == accepted ]]; then accepted=$((accepted + 1)); else refused=$((refused + 1)); fi
done
echo "accepted $accepted, refused $refused"

# Bad input: one line naming the file or flag.
echo 'data_config { nope: 1 }' > "$WORK/bad.config"
out=$("$TZREC" gen_data --pipeline_config_path "$WORK/bad.config" --output_dir "$WORK/bad" 2>&1) && fail "bad config accepted"
[[ $(echo "$out" | grep -c '^error:') == 1 && "$out" == *"bad.config:1:15"* ]] || fail "bad config: $out"
out=$("$TZREC" gen_data --pipeline_config_path "$ROOT/examples/deepfm_criteo_synth.config" --output_dir "$WORK/x" \
  --format csv 2>&1) && fail "--format csv with a config accepted"
[[ "$out" == *"--format csv cannot be combined with --pipeline_config_path"* ]] || fail "--format: $out"
touch "$WORK/file"
out=$("$TZREC" gen_data --pipeline_config_path "$ROOT/examples/deepfm_criteo_synth.config" \
  --output_dir "$WORK/file/sub" 2>&1) && fail "unwritable output dir accepted"
[[ "$out" == *"--output_dir"* ]] || fail "output dir: $out"
echo "gen_data_configs_test: OK"
