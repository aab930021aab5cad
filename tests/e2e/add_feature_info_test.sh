#!/usr/bin/env bash
# `tzrec add_feature_info_to_config` on TorchEasyRec's multi_tower_din_fg_mock config (copied
# unchanged) with a feature-analysis table in CSV written here: a new embedding_dim and
# hash_bucket_size for combo_1, new boundaries and embedding_dim for raw_1 and its sequence
# twin click_50_seq__raw_1, raw_9 and the pair raw_3 / click_50_seq__raw_3 dropped ("DROP IT" in
# the message). The written config names the new values and no dropped feature, passes
# check_config, and trains on its gen_data data; a feature_info without embedding_dim is refused
# naming the table's line.
set -euo pipefail
TZREC=$1
ROOT=$2
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT
fail() { echo "FAIL: $*"; exit 1; }
cd "$WORK"
mkdir -p data/test
cp "$ROOT"/tests/data/vocab/id_vocab_* data/test/
CONFIG="$ROOT/tests/configs/torcheasyrec/multi_tower_din_fg_mock.config"

cat > info.csv <<'CSV'
feature,feature_info,message
combo_1,"{""embedding_dim"": ""24"", ""hash_bucket_size"": ""3000""}",
raw_1,"{""embedding_dim"": ""8"", ""boundary"": [""0.25"", ""0.5"", ""0.75""]}",
click_50_seq__raw_1,"{""embedding_dim"": ""8"", ""boundary"": [""0.25"", ""0.5"", ""0.75""]}",
raw_9,"{""embedding_dim"": ""16""}","coverage 0.1%, DROP IT"
raw_3,"{""embedding_dim"": ""16""}",DROP IT
click_50_seq__raw_3,"{""embedding_dim"": ""16""}",DROP IT
CSV
"$TZREC" add_feature_info_to_config --template_model_config_path "$CONFIG" --model_config_path out.config \
  --config_table_path info.csv > add.log 2>&1 || { cat add.log; fail "add_feature_info_to_config"; }
grep -q "3 features edited, 3 dropped" add.log || { cat add.log; fail "summary line"; }
/usr/bin/python3 - <<'PY' || fail "the written config"
import re
text = open("out.config").read()
for dropped in ["raw_9", "raw_3", "click_50_seq__raw_3"]:
    assert f'"{dropped}"' not in text, dropped
def block(name):
    m = re.search(r'feature_name: "%s"(.*?)\n\s*}' % name, text, re.S)
    assert m, name
    return m.group(1)
combo = block("combo_1")
assert "hash_bucket_size: 3000" in combo and "embedding_dim: 24" in combo, combo
for b in [block("raw_1")] + [m.group(1) for m in re.finditer(r'feature_name: "raw_1"(.*?)\n\s*}', text, re.S)]:
    assert "embedding_dim: 8" in b and re.search(r"boundaries: \[?0\.25", b), b
PY
"$TZREC" check_config --pipeline_config_path out.config > check.log 2>&1 || { cat check.log; fail "check_config"; }
"$TZREC" gen_data --pipeline_config_path out.config --output_dir W --num_rows 256 --num_eval_rows 64 2> gen.log \
  || { cat gen.log; fail "gen_data"; }
sed 's/num_epochs: [0-9]*/num_steps: 5/' W/pipeline.config > W/run.config
"$TZREC" train_eval --pipeline_config_path W/run.config --model_dir W/model \
  --edit_config_json '{"data_config.batch_size":64}' \
  > train.log 2>&1 || { tail -5 train.log; fail "train_eval of the written config"; }

cat > bad.csv <<'CSV'
feature,feature_info,message
combo_1,"{""hash_bucket_size"": ""3000""}",
CSV
"$TZREC" add_feature_info_to_config --template_model_config_path "$CONFIG" --model_config_path bad.config \
  --config_table_path bad.csv > bad.log 2>&1 && fail "a feature_info without embedding_dim accepted"
grep -q "^error: .*bad.csv line 2 column feature_info: feature combo_1: feature_info has no \"embedding_dim\"" bad.log \
  || { cat bad.log; fail "the error line"; }
echo "add_feature_info_to_config: OK"
