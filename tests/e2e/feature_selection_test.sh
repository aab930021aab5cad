#!/usr/bin/env bash
# tzrec feature_selection (TorchEasyRec's tools/feature_selection, docs/tzrec-compatibility.md
# §3.5) on the two TorchEasyRec configs with variational_dropout, as its integration tests run it
# (--topk 5 after train_eval):
#  1. dbmtl_has_sequence_variational_dropout_mock (a DEEP group with nested sequence groups and
#     encoders): feature_dropout_ratio_deep.csv lists the group's features and its encoders'
#     outputs (<group>_seq_encoder_<i>) ascending by ratio, each ratio sigmoid(feature_p) of the
#     checkpoint as PyTorch computes it (read independently here), and the selected config keeps
#     the top 5 of the group in their order, trains, and drops only features the ranking dropped;
#  2. dssm_variational_dropout_mock (match towers: the dropouts live in user_tower / item_tower):
#     one CSV per tower group and a selected config that trains;
#  3. --visualize and a config without variational_dropout are one-line errors.
# Usage: feature_selection_test.sh <tzrec binary> <repo root>
set -euo pipefail
TZREC=$1
ROOT=$2
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT
cd "$WORK"
export OMP_NUM_THREADS=1 TORCH_MANUAL_SEED=1
fail() { echo "FAIL: $*"; exit 1; }
PY=/usr/bin/python3
CONFIGS=$ROOT/tests/configs/torcheasyrec

train() {  # train <config> <data dir> <model_dir>
  "$TZREC" train_eval --pipeline_config_path "$1" --model_dir "$3" --train_input_path "$2/train.parquet" \
    --eval_input_path "$2/eval.parquet" 2> "$3.log" || { tail -5 "$3.log"; fail "train_eval $1"; }
}

# 1. DBMTL with sequence groups.
"$TZREC" gen_data --pipeline_config_path "$CONFIGS/dbmtl_has_sequence_variational_dropout_mock.config" \
  --output_dir D --num_rows 512 --num_eval_rows 64 2> gen_d.log || { cat gen_d.log; fail "gen_data dbmtl"; }
train D/pipeline.config D dbmtl
"$TZREC" feature_selection --pipeline_config_path dbmtl/pipeline.config --model_dir dbmtl --topk 5 \
  --output_dir fs_dbmtl 2> fs_dbmtl.log || { cat fs_dbmtl.log; fail "feature_selection dbmtl"; }
[[ -f fs_dbmtl/pipeline.config ]] || fail "no fs_dbmtl/pipeline.config"
$PY - "$ROOT/tests/tools/compare_safetensors.py" "$(ls -d dbmtl/model.ckpt-* | tail -1)" <<'PY' || fail "dbmtl ratios"
import csv, glob, importlib.util, re, sys
import torch
spec = importlib.util.spec_from_file_location("st", sys.argv[1])
st = importlib.util.module_from_spec(spec)
spec.loader.exec_module(st)
tensors = st.read(glob.glob(sys.argv[2] + "/model*.safetensors")[0])
p = tensors["group_variational_dropouts.deep.feature_p"]
config = open("dbmtl/pipeline.config").read()
deep = re.search(r'group_name: "deep"(.*?)sequence_groups', config, re.S).group(1)
names = re.findall(r'feature_names: "([^"]+)"', deep)
names += [f"deep_seq_encoder_{i}" for i in range(config.count("sequence_encoders {"))]
assert len(names) == len(p), (names, p.shape)
ratios = torch.tensor(p).sigmoid().tolist()
expected = sorted(zip(names, ratios), key=lambda e: e[1])
rows = list(csv.reader(open("fs_dbmtl/feature_dropout_ratio_deep.csv")))
assert rows[0] == ["feature_name", "mean_drop_p"], rows[0]
got = [(n, float(r)) for n, r in rows[1:]]
assert [n for n, _ in got] == [n for n, _ in expected], (got, expected)
assert all(repr(r) == s for (_, r), (_, s) in zip(expected, rows[1:])), (expected, rows[1:])
top = {n for n, _ in expected[:5]}
selected = open("fs_dbmtl/pipeline.config").read()
kept = re.findall(r'feature_names: "([^"]+)"', re.search(r'group_name: "deep"(.*?)sequence_groups', selected, re.S).group(1))
# The top 5 may include encoder outputs, which are no feature names.
assert kept == [n for n in names if n in top and not n.startswith("deep_seq_encoder_")], (kept, top)
# The feature configs: all but the deep features the ranking dropped (the sequence groups' stay).
def configured(text):
    return re.findall(r'feature_name: "([^"]+)"', text.split("model_config {")[0])
model = config.split("model_config {")[1]
in_sequence_groups = set(re.findall(r'feature_names: "([^"]+)"', model.split("sequence_groups", 1)[1]))
dropped = [n for n in names if n not in top and not n.startswith("deep_seq_encoder_") and n not in in_sequence_groups]
assert configured(selected) == [n for n in configured(config) if n not in dropped], (configured(selected), dropped)
print(f"deep: {len(names)} entries ranked as sigmoid(feature_p), kept {kept}, dropped the features {dropped}")
PY
train fs_dbmtl/pipeline.config D dbmtl_selected

# 2. DSSM: the dropouts of the towers' groups.
"$TZREC" gen_data --pipeline_config_path "$CONFIGS/dssm_variational_dropout_mock.config" \
  --output_dir S --num_rows 512 --num_eval_rows 64 2> gen_s.log || { cat gen_s.log; fail "gen_data dssm"; }
train S/pipeline.config S dssm
"$TZREC" feature_selection --pipeline_config_path dssm/pipeline.config --model_dir dssm --topk 5 \
  --output_dir fs_dssm 2> fs_dssm.log || { cat fs_dssm.log; fail "feature_selection dssm"; }
for g in user item; do
  [[ -f fs_dssm/feature_dropout_ratio_$g.csv ]] || { ls fs_dssm; fail "no ratios of the $g tower's group"; }
done
train fs_dssm/pipeline.config S dssm_selected

# 3. Errors.
status=0
"$TZREC" feature_selection --pipeline_config_path dssm/pipeline.config --model_dir dssm --output_dir v --visualize \
  > vis.log 2>&1 || status=$?
[[ $status != 0 && $(wc -l < vis.log) == 1 ]] && grep -q "^error: not supported yet: feature_selection --visualize" vis.log \
  || { cat vis.log; fail "--visualize"; }
sed '/variational_dropout {/,/}/d' dssm/pipeline.config > plain.config
status=0
"$TZREC" feature_selection --pipeline_config_path plain.config --model_dir dssm --output_dir p > plain.log 2>&1 || status=$?
[[ $status != 0 ]] && grep -q "^error: model_config.variational_dropout is not set" plain.log \
  || { cat plain.log; fail "no variational_dropout"; }
echo OK
