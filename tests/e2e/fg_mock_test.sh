#!/usr/bin/env bash
# TorchEasyRec's multi_tower_din_fg_mock.config (tests/configs/torcheasyrec): FG_DAG features of
# many kinds — id features with vocab_list / vocab_file, raw features with boundaries, AutoDis and
# MLP dense embeddings, combo, lookup, match, expr, a custom EditDistance feature, grouped and
# stand-alone sequences — run from a working directory that holds its vocab file at data/test/.
# Run unchanged — its two lookups keyed by other features' outputs (`feature:` inputs) are
# evaluated in dependency order — gen_data writes its inputs and it trains, exports (the vocab
# file travels in the package under its md5 name, named by the package's fg.json and
# pipeline.config) and predicts from a moved package.
set -euo pipefail
TZREC=$1
ROOT=$2
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT
fail() { echo "FAIL: $*"; exit 1; }
cd "$WORK"
mkdir -p data/test
cp "$ROOT/tests/data/vocab/id_vocab_list_1" data/test/
ORIGINAL="$ROOT/tests/configs/torcheasyrec/multi_tower_din_fg_mock.config"

CONFIG=$ORIGINAL
"$TZREC" check_config --pipeline_config_path "$CONFIG" > check.log 2>&1 || { cat check.log; fail "check_config"; }
"$TZREC" gen_data --pipeline_config_path "$CONFIG" --output_dir gen --num_rows 2048 --num_eval_rows 512 \
  2> gen.log || { cat gen.log; fail "gen_data"; }
sed 's/num_epochs: [0-9]*/num_steps: 24/' gen/pipeline.config > run.config
"$TZREC" train_eval --pipeline_config_path run.config --model_dir model \
  --edit_config_json '{"data_config.batch_size":256,"data_config.num_workers":2}' \
  2> train.log || { tail -5 train.log; fail "train_eval"; }
[[ -s model/train_eval_result_v2.txt ]] || fail "no train_eval_result_v2.txt"
grep -q '"auc"' model/train_eval_result_v2.txt || { cat model/train_eval_result_v2.txt; fail "no auc"; }

"$TZREC" export --pipeline_config_path model/pipeline.config --export_dir export 2> export.log \
  || { tail -5 export.log; fail "export"; }
ASSET=id_vocab_list_1_$(md5sum data/test/id_vocab_list_1 | cut -c1-32)
[[ -f "export/$ASSET" ]] || { ls export; fail "the vocab file is not in the package as $ASSET"; }
cmp -s "export/$ASSET" data/test/id_vocab_list_1 || fail "the packaged vocab file differs"
grep -q "\"vocab_file\": \"$ASSET\"" export/fg.json || fail "fg.json does not name $ASSET"
grep -q "vocab_file: \"$ASSET\"" export/pipeline.config || fail "pipeline.config does not name $ASSET"
grep -q '"operator_lib_file": "pyfg/lib/libedit_distance.so"' export/fg.json || fail "fg.json: custom_1"

# A moved package, read from elsewhere: the vocab file is found in the package.
mv export "$WORK/moved_export"
mkdir elsewhere && cd elsewhere
"$TZREC" predict --scripted_model_path "$WORK/moved_export" --predict_input_path "$WORK/gen/eval.parquet" \
  --predict_output_path "$WORK/pred" 2> "$WORK/predict.log" || { tail -5 "$WORK/predict.log"; fail "predict"; }
[[ -s "$WORK/pred/part-0.parquet" ]] || fail "no predictions"
grep -q "^rows: 512$" <<< "$("$TZREC" parquet_meta "$WORK/pred/part-0.parquet")" || fail "predictions: not 512 rows"

# create_fg_json copies the vocab file next to fg.json.
cd "$WORK"
"$TZREC" create_fg_json --pipeline_config_path "$CONFIG" --fg_output_dir fg 2> fg.log || { cat fg.log; fail "create_fg_json"; }
[[ -f "fg/$ASSET" ]] || fail "create_fg_json: no $ASSET"
cmp -s fg/fg.json "$WORK/moved_export/fg.json" || fail "create_fg_json's fg.json differs from the package's"
echo "fg_mock_test: OK"
