#!/usr/bin/env bash
# tzrec create_dynamicemb_init_ckpt (TorchEasyRec's tools/dynamicemb/create_dynamicemb_init_ckpt,
# docs/tzrec-compatibility.md §5.13) on tests/configs/gen_data/dynamicemb.config (FG_NORMAL DeepFM):
#  1. user_id's dynamicemb gets an init_table: a CSV of every user id of train.parquet plus ten
#     "cold" ids the data never holds, each with its own embedding; the tool fills the DEEP table
#     user_id_emb with all 128 ids (not the WIDE twin) and writes only that table;
#  2. train_eval --fine_tune_checkpoint on one process: every init id is in the trained table, and
#     the cold ids (never looked up, so never updated) hold their init rows bit for bit;
#  3. the same on 2 ranks under `tzrec launch`: each id lies in the block of the rank owning it
#     (§5.13 "Ranks"), and the cold ids hold their init rows bit for bit;
#  4. train_eval without --fine_tune_checkpoint warns that training does not read init tables;
#  5. a bad row and an existing output directory are one-line errors naming what to fix (the bad
#     row after the info line saying which table is being read).
# Usage: dynamicemb_init_ckpt_test.sh <tzrec binary> <repo root>
set -euo pipefail
TZREC=$1
ROOT=$2
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT
cd "$WORK"
export OMP_NUM_THREADS=1 TORCH_MANUAL_SEED=1
fail() { echo "FAIL: $*"; exit 1; }
PY=/usr/bin/python3

"$TZREC" gen_data --pipeline_config_path "$ROOT/tests/configs/gen_data/dynamicemb.config" --output_dir W \
  --num_rows 256 --num_eval_rows 64 2> gen.log || { cat gen.log; fail "gen_data"; }
# user_id: a capacity that holds every id (no eviction), and the init table.
sed -e "0,/      max_capacity: 64/s##      max_capacity: 4096 init_table: \"$WORK/user_init.csv\"#" \
  W/pipeline.config > cfg.config
grep -q "init_table: \"$WORK/user_init.csv\"" cfg.config || fail "cfg.config: no user_id max_capacity to edit"
"$TZREC" parquet_cat W/train.parquet --columns user_id | $PY -c '
import json, sys
ids = sorted({json.loads(l)["user_id"] for l in sys.stdin})
print("user_id,emb")
for i in ids:
    print(f"{i},\"" + ",".join(str(0.01 * (i % 7) + 0.001 * k) for k in range(8)) + "\"")
for c in range(10):  # cold ids: rows starting at 1000 + c
    print(f"cold{c},\"" + ",".join(str(1000 + c + 0.5 * k) for k in range(8)) + "\"")
' > user_init.csv
rows=$(($(wc -l < user_init.csv) - 1))

# 1. The init checkpoint.
"$TZREC" create_dynamicemb_init_ckpt --pipeline_config_path cfg.config --save_dir init --world_size 2 \
  2> init.log || { cat init.log; fail "create_dynamicemb_init_ckpt"; }
grep -q "table 'user_id_emb': $rows id(s) in $WORK/user_init.csv (columns 'user_id', 'emb'), $rows loaded (max capacity 4096), 0 dropped" \
  init.log || { cat init.log; fail "not every init id loaded"; }
grep -q "restores on any world size, 2 ranks included" init.log || fail "--world_size 2: log"

cat > check.py <<'PY'
import glob, importlib.util, sys
import numpy as np
spec = importlib.util.spec_from_file_location("st", sys.argv[1])
st = importlib.util.module_from_spec(spec)
spec.loader.exec_module(st)
D = "embedding_group.emb_impls.__BASE__.dynamicemb_ebc."
W = D + "_embedding_module.embedding_bags.user_id_emb.weight"
S = D + "dynamic_tables.user_id_emb."
M = (1 << 64) - 1
def owner(i, world):  # docs/tzrec-compatibility.md §5.13 "Ranks"
    x = (i ^ 0x5851F42D4C957F2D) & M
    x = ((x ^ (x >> 30)) * 0xBF58476D1CE4E5B9) & M
    x = ((x ^ (x >> 27)) * 0x94D049BB133111EB) & M
    x ^= x >> 31
    return (x * world) >> 64
def rows(tensors):  # id -> its row: a block's rows in use come first, in row_keys order
    return {int(k): tensors[W][r] for r, (k, l) in enumerate(zip(tensors[S + "row_keys"], tensors[S + "row_live"])) if l}
mode, init_file, trained = sys.argv[2], sys.argv[3], sys.argv[4]
init_tensors = st.read(init_file)
names = sorted(init_tensors)
assert all(n.startswith(D) and ".user_id_emb." in n for n in names), names
init = rows(init_tensors)
assert len(init) == int(sys.argv[5]), (len(init), sys.argv[5])
cold = {k: v for k, v in init.items() if v[0] >= 1000}
assert len(cold) == 10, len(cold)
if mode == "one":
    held = rows(st.read(glob.glob(trained + "/model.safetensors")[0]))
else:
    held = {}
    for rank in (0, 1):
        block = rows(st.read(f"{trained}/model-{rank:06d}-of-000002.safetensors"))
        for k in block:
            assert owner(k, 2) == rank, (k, rank)
        held.update(block)
missing = set(init) - set(held)
assert not missing, f"{len(missing)} init ids not in the trained table"
for k, v in cold.items():
    assert np.array_equal(held[k], v), (k, held[k], v)
trained_rows = sum(not np.array_equal(held[k], v) for k, v in init.items() if k not in cold)
assert trained_rows > 0, "no init row was trained"
print(f"{mode}: {len(init)} init ids held, the 10 cold rows bit for bit, {trained_rows} rows trained")
PY
CMP=$ROOT/tests/tools/compare_safetensors.py
# 2. One process.
"$TZREC" train_eval --pipeline_config_path cfg.config --model_dir one --fine_tune_checkpoint init/model.ckpt-0 \
  2> one.log || { tail -5 one.log; fail "train_eval --fine_tune_checkpoint"; }
grep -q "fine_tune_checkpoint: loaded 7 of .* model tensors from init/model.ckpt-0" one.log \
  || { grep fine_tune one.log; fail "fine-tune: the init tensors"; }
$PY check.py "$CMP" one init/model.ckpt-0/model.safetensors "$(ls -d one/model.ckpt-* | tail -1)" "$rows" \
  || fail "one process: the init rows"
# 3. Two ranks.
"$TZREC" launch --nproc-per-node 2 --standalone -- train_eval --pipeline_config_path cfg.config --model_dir two \
  --fine_tune_checkpoint init/model.ckpt-0 > two.out 2> two.log || { tail -5 two.log; fail "2 ranks"; }
$PY check.py "$CMP" two init/model.ckpt-0/model.safetensors "$(ls -d two/model.ckpt-* | tail -1)" "$rows" \
  || fail "two ranks: the init rows"

# 4. Training without the init checkpoint says so.
"$TZREC" train_eval --pipeline_config_path cfg.config --model_dir none \
  2> none.log || { tail -5 none.log; fail "train_eval without --fine_tune_checkpoint"; }
grep -q "WARNING.*feature_configs\[0\].id_feature.dynamicemb.init_table: training does not read init tables" none.log \
  || fail "no warning without --fine_tune_checkpoint"

# 5. Errors.
status=0
"$TZREC" create_dynamicemb_init_ckpt --pipeline_config_path cfg.config --save_dir init > again.log 2>&1 || status=$?
[[ $status != 0 && $(wc -l < again.log) == 1 ]] \
  && grep -q "^error: init/model.ckpt-0 already exists; remove it or choose another --save_dir$" again.log \
  || { cat again.log; fail "existing output: message"; }
sed -i '5s/"$/,0.5"/' user_init.csv  # row 5 (line 5): nine numbers
status=0
"$TZREC" create_dynamicemb_init_ckpt --pipeline_config_path cfg.config --save_dir bad > bad.log 2>&1 || status=$?
[[ $status != 0 && $(grep -c "^error:" bad.log) == 1 ]] \
  && grep -q "^error: $WORK/user_init.csv line 5 column emb: init table of 'user_id_emb' (feature_configs\[0\].id_feature.dynamicemb.init_table): the embedding has 9 value(s), expected embedding_dim 8" <<< "$(tail -1 bad.log)" \
  || { cat bad.log; fail "bad row: message"; }
[[ ! -e bad ]] || fail "a bad init table wrote something"
echo OK
