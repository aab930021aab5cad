#!/usr/bin/env bash
# `tzrec gen_data --dataset behaviour` writes the user-behaviour data set (CSV and Parquet) that
# examples/multi_tower_din_behaviour.config reads; the DIN config trains a few steps on both
# formats and evaluates; --dataset with --pipeline_config_path, or an unknown data set, is one
# error line.
set -euo pipefail
TZREC=$1
ROOT=$2
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT
fail() { echo "FAIL: $*"; exit 1; }
CONFIG=$ROOT/examples/multi_tower_din_behaviour.config
D=$WORK/data

for format in csv parquet; do
  "$TZREC" gen_data --dataset behaviour --output_dir "$D" --num_rows 2000 --num_eval_rows 500 --seed 5 \
    --format "$format" 2> "$WORK/gen.$format.log" || { cat "$WORK/gen.$format.log"; fail "gen_data --format $format"; }
done

# CSV: header, row counts, '|'-joined histories with the same item count in all three columns.
header=label,user_id,item_id,cate_id,brand,click_seq__item_id,click_seq__cate_id,click_seq__brand
[[ $(head -n 1 "$D/train.csv") == "$header" ]] || fail "train.csv header: $(head -n 1 "$D/train.csv")"
[[ $(wc -l < "$D/train.csv") -eq 2001 && $(wc -l < "$D/eval.csv") -eq 501 ]] || fail "row counts"
awk -F, 'NR > 1 {
    n = ($6 == "") ? 0 : split($6, a, "|"); m = ($7 == "") ? 0 : split($7, b, "|"); k = ($8 == "") ? 0 : split($8, c, "|")
    if (n != m || n != k) { print "line " NR ": history lengths " n ", " m ", " k; bad = 1 }
    if (n == 0) empty++; if (n > 50) long++; pos += $1
  } END {
    if (bad) exit 1
    if (empty == 0 || long == 0) { print "no empty or no > 50 history (" empty ", " long ")"; exit 1 }
    if (pos / (NR - 1) < 0.2 || pos / (NR - 1) > 0.4) { print "positive rate " pos / (NR - 1); exit 1 }
  }' "$D/train.csv" || fail "train.csv histories"
# The same seed writes the same bytes.
"$TZREC" gen_data --dataset behaviour --output_dir "$WORK/again" --num_rows 2000 --num_eval_rows 0 --seed 5 2> /dev/null
cmp -s "$D/train.csv" "$WORK/again/train.csv" || fail "gen_data is not deterministic for a seed"

# Parquet: INT64 ids, STRING histories.
"$TZREC" parquet_meta "$D/train.parquet" > "$WORK/meta"
grep -q "^rows: 2000$" "$WORK/meta" || { cat "$WORK/meta"; fail "train.parquet rows"; }
for want in label=INT64 user_id=INT64 item_id=INT64 cate_id=INT64 brand=INT64 click_seq__item_id=BYTE_ARRAY \
    click_seq__cate_id=BYTE_ARRAY click_seq__brand=BYTE_ARRAY; do
  grep -qE "^  ${want%%=*}: ${want#*=}" "$WORK/meta" || { cat "$WORK/meta"; fail "train.parquet: no column $want"; }
done

"$TZREC" check_config --pipeline_config_path "$CONFIG" > /dev/null || fail "the DIN example does not validate"
sed 's/num_epochs: [0-9]*/num_steps: 5/' "$CONFIG" > "$WORK/din.config"
for format in csv parquet; do
  dataset=CsvDataset
  [[ $format == parquet ]] && dataset=ParquetDataset
  edit='{"train_input_path":"'$D'/train.'$format'","eval_input_path":"'$D'/eval.'$format'",'
  edit+='"data_config.dataset_type":"'$dataset'","data_config.batch_size":128}'
  M=$WORK/model_$format
  "$TZREC" train_eval --pipeline_config_path "$WORK/din.config" --model_dir "$M" --edit_config_json "$edit" \
    2> "$WORK/train.$format.log" || { tail -20 "$WORK/train.$format.log"; fail "train_eval on $format"; }
  [[ -d "$M/model.ckpt-4" ]] || fail "$format: no final checkpoint model.ckpt-4"
  grep -q '"auc"' "$M/train_eval_result_v2.txt" || fail "$format: no auc in train_eval_result_v2.txt"
  echo "trained on $format: $(tail -n 1 "$M/train_eval_result_v2.txt")"
done

# Bad input: one error line naming the flag.
out=$("$TZREC" gen_data --dataset behaviour --pipeline_config_path "$CONFIG" --output_dir "$WORK/x" 2>&1) \
  && fail "--dataset with --pipeline_config_path accepted"
[[ $(echo "$out" | wc -l) -eq 1 && "$out" == *"--dataset behaviour cannot be combined with --pipeline_config_path"* ]] \
  || fail "--dataset with a config: $out"
[[ ! -e "$WORK/x" ]] || fail "--dataset with a config wrote $WORK/x"
set +e
out=$("$TZREC" gen_data --dataset taobao --output_dir "$WORK/y" 2>&1)
rc=$?
set -e
[[ $rc -eq 2 && $(echo "$out" | wc -l) -eq 1 && "$out" == *"--dataset"* ]] || fail "--dataset taobao (exit $rc): $out"
echo "behaviour_dataset_test: OK"
