#!/usr/bin/env bash
# `tzrec create_fg_json` end to end (TorchEasyRec's tzrec.tools.create_fg_json):
#   - the fg.json of tests/configs/multi_tower_fg_normal.config: features in config order, entries
#     as TorchEasyRec's _fg_json() methods write them (checked key by key, in order), reserves, the
#     json.dump(indent=4) text;
#   - a grouped sequence and combo / lookup / match features (gen_data/fg_combo_lookup_match.config);
#   - --remove_bucketizer, --fg_resource_name, an existing output directory;
#   - bad requests: one "error:" line naming the flag or path.
set -uo pipefail
TZREC=$1
ROOT=$2
WORK=$(mktemp -d)
trap 'chmod -R u+w "$WORK"; rm -rf "$WORK"' EXIT
fail() { echo "FAIL: $*"; exit 1; }
PY=/usr/bin/python3

CFG=$ROOT/tests/configs/multi_tower_fg_normal.config
"$TZREC" create_fg_json --pipeline_config_path "$CFG" --fg_output_dir "$WORK/out/fg" --reserves " clk, weight" \
  2> "$WORK/log" || { cat "$WORK/log"; fail "create_fg_json"; }
[[ -f "$WORK/out/fg/fg.json" ]] || fail "no fg.json in the new directory"
[[ ! -e "$WORK/out/fg/fg.json.tmp" ]] || fail "fg.json.tmp left behind"
CLM=$ROOT/tests/configs/gen_data/fg_combo_lookup_match.config
"$TZREC" create_fg_json --pipeline_config_path "$CLM" --fg_output_dir "$WORK/out/fg" --fg_resource_name clm.json \
  2> "$WORK/log" || { cat "$WORK/log"; fail "create_fg_json into an existing directory"; }
"$TZREC" create_fg_json --pipeline_config_path "$CFG" --fg_output_dir "$WORK/nobucket" --remove_bucketizer \
  2> "$WORK/log" || { cat "$WORK/log"; fail "create_fg_json --remove_bucketizer"; }

"$PY" - "$WORK" <<'PYEOF' || fail "fg.json content"
import json, sys
work = sys.argv[1]
text = open(f"{work}/out/fg/fg.json").read()
doc = json.loads(text)
# Python's json.dump(doc, f, indent=4) of the same document gives the same text.
assert text == json.dumps(doc, indent=4), "text differs from json.dump(indent=4)"
assert list(doc) == ["features", "reserves"], list(doc)
assert doc["reserves"] == ["clk", "weight"], doc["reserves"]
feats = doc["features"]
names = [f["feature_name"] for f in feats]
assert names == ["user_id", "cms_segid", "gender", "age_level", "adgroup_id", "tag", "price", "ctr_7d", "pid"], names

def same(entry, expected):  # values and key order
    assert list(entry.items()) == list(expected.items()), f"\n{entry}\n!=\n{expected}"

same(feats[0], {"feature_type": "id_feature", "feature_name": "user_id", "default_value": "",
                "expression": "user:user_id", "value_type": "string", "need_prefix": False,
                "hash_bucket_size": 1000000, "value_dim": 0})
same(feats[1], {"feature_type": "id_feature", "feature_name": "cms_segid", "default_value": "",
                "expression": "user:cms_segid", "value_type": "string", "need_prefix": False,
                "vocab_list": ["", "<OOV>", "0", "1", "2", "3", "4", "5"], "default_bucketize_value": 1,
                "value_dim": 0})
# vocab_dict: no default_value entry when the default value is empty (BaseFeature.vocab_dict).
same(feats[2], {"feature_type": "id_feature", "feature_name": "gender", "default_value": "",
                "expression": "user:final_gender_code", "value_type": "string", "need_prefix": False,
                "vocab_dict": {"1": 2, "2": 3}, "default_bucketize_value": 1, "value_dim": 0})
same(feats[3], {"feature_type": "raw_feature", "feature_name": "age_level", "default_value": "0",
                "expression": "user:age_level", "value_type": "float"})
same(feats[5], {"feature_type": "id_feature", "feature_name": "tag", "default_value": "",
                "expression": "item:tags", "value_type": "string", "need_prefix": False, "separator": "|",
                "hash_bucket_size": 10000, "value_dim": 0})
same(feats[6], {"feature_type": "raw_feature", "feature_name": "price", "default_value": "0",
                "expression": "item:price", "value_type": "float",
                "boundaries": [1.0, 10.0, 50.0, 100.0, 1000.0]})
same(feats[7], {"feature_type": "raw_feature", "feature_name": "ctr_7d", "default_value": "0",
                "expression": "item:ctr_7d", "value_type": "float",
                "normalizer": "method=log10,threshold=1e-10,default=-10"})

clm = json.load(open(f"{work}/out/fg/clm.json"))
assert list(clm) == ["features"], list(clm)
kinds = [(f.get("feature_type"), f.get("feature_name", f.get("sequence_name"))) for f in clm["features"]]
assert kinds == [("id_feature", "cate"), ("combo_feature", "age_x_cate"), ("lookup_feature", "cate_cnt"),
                 ("lookup_feature", "cate_ctr"), ("lookup_feature", "cate_vec__lookup"),
                 ("raw_feature", "cate_vec"), ("lookup_feature", "cate_tag"), ("match_feature", "cate_brand_cnt"),
                 ("match_feature", "any_brand"), (None, "click")], kinds
seq = clm["features"][-1]
assert list(seq)[:4] == ["sequence_name", "sequence_length", "sequence_delim", "sequence_pk"], list(seq)
assert (seq["sequence_length"], seq["sequence_delim"], seq["sequence_pk"]) == (5, ";", "user:click"), seq
assert [f["feature_name"] for f in seq["features"]] == ["cate", "age_x_cate", "cate_cnt"], seq
assert all(f["default_value"] == "0" for f in seq["features"]), seq
assert clm["features"][8]["matchType"] == "multihit", clm["features"][8]
assert clm["features"][3]["combiner"] == "mean" and "value_dim" not in clm["features"][3], clm["features"][3]

nob = json.load(open(f"{work}/nobucket/fg.json"))
for f in nob["features"]:
    assert not {"hash_bucket_size", "vocab_list", "vocab_dict", "boundaries", "num_buckets"} & set(f), f
assert nob["features"][1]["default_bucketize_value"] == 1, nob["features"][1]
assert "reserves" not in nob
PYEOF

expect_exit() {  # expect_exit <status> <stderr pattern> <args...>: one "error:" line, that status
  local want=$1 pattern=$2; shift 2
  "$TZREC" "$@" > "$WORK/stdout" 2> "$WORK/err"
  local rc=$?
  [[ $rc -eq $want ]] || { cat "$WORK/err"; fail "'$*' exited $rc, not $want"; }
  [[ $(wc -l < "$WORK/err") -eq 1 ]] || { cat "$WORK/err"; fail "'$*' printed more than one line"; }
  grep -q -- "$pattern" "$WORK/err" || { cat "$WORK/err"; fail "'$*' did not report '$pattern'"; }
}
expect_exit 2 "^error: tzrec create_fg_json: --fg_output_dir is required" create_fg_json --pipeline_config_path "$CFG"
expect_exit 2 "unknown flag --fg_outptu_dir; did you mean --fg_output_dir?" \
  create_fg_json --pipeline_config_path "$CFG" --fg_outptu_dir "$WORK/x"
expect_exit 1 "^error: not supported yet: --odps_project_name" \
  create_fg_json --pipeline_config_path "$CFG" --fg_output_dir "$WORK/x" --odps_project_name p --fg_resource_name r
expect_exit 1 "^error: not supported yet: --debug" \
  create_fg_json --pipeline_config_path "$CFG" --fg_output_dir "$WORK/x" --debug
expect_exit 2 "^error: --reserves \"a,,b\": column 2 is empty" \
  create_fg_json --pipeline_config_path "$CFG" --fg_output_dir "$WORK/x" --reserves a,,b
expect_exit 2 "^error: --fg_resource_name \"a/b.json\": must be a file name" \
  create_fg_json --pipeline_config_path "$CFG" --fg_output_dir "$WORK/x" --fg_resource_name a/b.json
expect_exit 1 "missing.config" create_fg_json --pipeline_config_path "$WORK/missing.config" --fg_output_dir "$WORK/x"
sed 's/hash_bucket_size: 1000000/hash_bucket_size: 0/' "$CFG" > "$WORK/bad.config"
expect_exit 1 "feature_configs\[0\].id_feature.hash_bucket_size" \
  create_fg_json --pipeline_config_path "$WORK/bad.config" --fg_output_dir "$WORK/x"
[[ ! -e "$WORK/x" ]] || fail "a failed create_fg_json created $WORK/x"
touch "$WORK/file"
expect_exit 1 "^error: --fg_output_dir $WORK/file: cannot create the directory" \
  create_fg_json --pipeline_config_path "$CFG" --fg_output_dir "$WORK/file"
mkdir "$WORK/ro" && chmod a-w "$WORK/ro"
if [[ ! -w "$WORK/ro" ]]; then  # root writes anywhere
  expect_exit 1 "$WORK/ro/fg.json.tmp" create_fg_json --pipeline_config_path "$CFG" --fg_output_dir "$WORK/ro"
fi
echo OK
