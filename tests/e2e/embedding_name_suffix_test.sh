#!/usr/bin/env bash
# Feature groups' embedding_name_suffix end to end (TorchEasyRec docs/source/models/feature_group.md):
#   - DSSM (TorchEasyRec's dssm_fg_mock.config) with the towers suffixed "user" and "item": trained,
#     both towers exported and predicted; the checkpoint's tables carry the suffixes, the nested
#     sequence group's included (inherited from its DEEP group), and the two features sharing
#     embedding_name user_id_3_emb share "user_id_3_emb_user";
#   - DeepFM (the example) with its fm group suffixed "fm": the fm group looks up tables of its
#     own ("cat_0_emb_fm") next to the deep group's ("cat_0_emb") and the wide group's
#     ("cat_0_emb_wide"), and `tzrec plan` lists them.
set -euo pipefail
TZREC=$1
ROOT=$2
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT
fail() { echo "FAIL: $*"; exit 1; }
source "$ROOT/tests/e2e/lib/config_run.sh"
# dssm_fg_mock.config's title tokenizer is read from data/test/tokenizer.json (the cut-down copy
# of tests/e2e/lib/torcheasyrec_configs.sh).
cd "$WORK"
mkdir -p data/test
cp "$ROOT/tests/data/tokenizer/small_tokenizer.json" data/test/tokenizer.json

# trained NAME: WORK/NAME.config on gen_data data in W=WORK/NAME trained, exported and predicted
# (run_generated_config); its checkpoint's parameter names in W.params.
trained() {
  W=$WORK/$1
  "$TZREC" gen_data --pipeline_config_path "$WORK/$1.config" --output_dir "$W" --num_rows 256 --num_eval_rows 64 \
    2> "$W.gen.log" || { cat "$W.gen.log"; fail "$1: gen_data"; }
  run_generated_config "$1" "$W"
  [[ $RUN_RESULT == accepted ]] || fail "$1: refused"
  "$TZREC" list_checkpoint_params --checkpoint_path "$W/model" 2> /dev/null | cut -d' ' -f1 > "$W.params"
}

sed -e '0,/        group_name: "user"/s//        group_name: "user"\n        embedding_name_suffix: "user"/' \
    -e '0,/        group_name: "item"/s//        group_name: "item"\n        embedding_name_suffix: "item"/' \
    "$ROOT/tests/configs/torcheasyrec/dssm_fg_mock.config" > "$WORK/dssm.config"
[[ $(grep -c embedding_name_suffix "$WORK/dssm.config") == 2 ]] || fail "could not add the suffixes to the DSSM config"
trained dssm
for table in user_id_emb_user user_id_1_emb_user user_id_3_emb_user item_id_emb_item item_title_emb_item; do
  grep -Eq "\.ebc\.embedding_bags\.$table\.weight$" "$W.params" || { cat "$W.params"; fail "dssm: no table $table"; }
done
grep -Eq '\.seq_emb_impls\.__BASE__\.ec_dict\.[0-9]+\.embeddings\.click_50_seq__item_id_emb_user\.weight$' \
  "$W.params" || { cat "$W.params"; fail "dssm: the nested sequence group did not inherit the suffix"; }
if grep -Eq 'embedding_bags\.user_id_4_emb|embedding_bags\.user_id_emb\.|_emb\.weight$' "$W.params"; then
  cat "$W.params"; fail "dssm: a table without its group's suffix"
fi

sed -e '0,/    group_name: "fm"/s//    group_name: "fm"\n    embedding_name_suffix: "fm"/' \
    "$ROOT/examples/deepfm_criteo_synth.config" > "$WORK/deepfm.config"
grep -q 'embedding_name_suffix: "fm"' "$WORK/deepfm.config" || fail "could not add the suffix to the DeepFM config"
trained deepfm
for table in cat_0_emb cat_0_emb_fm cat_0_emb_wide; do
  grep -Eq "^embedding_group\.emb_impls\.__BASE__\.ebc\.embedding_bags\.$table\.weight$" "$W.params" ||
    { cat "$W.params"; fail "deepfm: no table $table"; }
done
"$TZREC" plan --pipeline_config_path "$W/model/pipeline.config" --world_size 2 --no_measure > "$W.plan" 2>&1 \
  || { cat "$W.plan"; fail "deepfm: tzrec plan"; }
grep -Eq '^cat_0_emb_fm ' "$W.plan" || { cat "$W.plan"; fail "deepfm: the plan does not list cat_0_emb_fm"; }
echo "embedding_name_suffix: OK"
