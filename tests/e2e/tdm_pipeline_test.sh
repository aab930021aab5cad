#!/usr/bin/env bash
# TDM end to end, as TorchEasyRec's TDM quick start runs it, on synthetic data with a learnable
# signal: 64 items in 8 categories; each user prefers one category, their history holds items of
# it and the clicked item is a random item of it.
#   - tdm_init_tree builds the initial tree (items grouped by category);
#   - train_eval trains the scorer on it; export writes export/model (the scorer) and
#     export/embedding (item_emb of the SEQUENCE group's query features, reduced config);
#   - predict with export/embedding writes item_emb per item; tdm_cluster_tree clusters them into
#     the learnt tree (which the TDM sampler loads again when training on it);
#   - train on the learnt tree, export, and tdm_retrieval with recall_num 8: recall against the
#     rows' items well above the random baseline recall_num / items, the recall in the log equal
#     to one recomputed from recall_ids;
#   - bad requests fail with one error line.
# All of it twice: integer item ids, then string ids "it<k>" under USE_HASH_NODE_ID=1
# (TorchEasyRec's switch for string ids: the tree tools write "nonleaf#<code>" ids and string-typed
# tables, the sampler and tdm_retrieval key ids by their text's hash, recall_ids are strings).
set -euo pipefail
TZREC=$1
ROOT=$2
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT
fail() { echo "FAIL: $*"; exit 1; }
PY=/usr/bin/python3
NUM_ITEMS=64
RECALL_NUM=8

# pipeline MODE: int (integer item ids) or hashed (ids "it<k>", USE_HASH_NODE_ID=1), in $WORK/MODE.
pipeline() {
MODE=$1
PREFIX=""
if [[ $MODE == hashed ]]; then PREFIX=it; export USE_HASH_NODE_ID=1; else unset USE_HASH_NODE_ID; fi
mkdir "$WORK/$MODE"
cd "$WORK/$MODE"

$PY - "$NUM_ITEMS" "$PREFIX" <<'PY'
import random, sys
n, prefix = int(sys.argv[1]), sys.argv[2]
rng = random.Random(7)
ident = lambda i: "%s%d" % (prefix, i)
with open("items.csv", "w") as f:
    f.write("item_id,cate,brand\n")
    for i in range(n):
        f.write("%s,%d,%d\n" % (ident(i), i // 8, i % 5))
def rows(path, count, users):
    with open(path, "w") as f:
        f.write("user_id,age,item_id,cate,brand,click_seq__item_id,click_seq__cate,clk\n")
        for _ in range(count):
            u = rng.randrange(users)
            c = u % 8
            item = c * 8 + rng.randrange(8)
            hist = [c * 8 + rng.randrange(8) for _ in range(rng.randint(1, 6))]
            f.write("%d,%d,%s,%d,%d,%s,%s,1\n" % (u, 20 + u % 30, ident(item), item // 8, item % 5,
                                                 ";".join(map(ident, hist)), ";".join(str(h // 8) for h in hist)))
rows("train.csv", 6000, 400)
rows("eval.csv", 300, 400)
PY

"$TZREC" tdm_init_tree --item_input_path items.csv --item_id_field item_id --cate_id_field cate \
  --attr_fields cate,brand --node_edge_output_file init_tree --tree_output_dir init_tree 2> init.log \
  || { cat init.log; fail "tdm_init_tree"; }
[[ "$(head -1 init_tree/serving_tree)" == "7 2" ]] || fail "64 items: a tree of 7 levels"
if [[ $MODE == hashed ]]; then
  [[ "$(head -1 init_tree/node_table.txt)" == "$(printf 'id:string\tweight:float\tfeature:string')" ]] \
    || fail "hashed ids: a string-typed node table"
  grep -q "^nonleaf#000\b" init_tree/node_table.txt || fail "hashed ids: the root is nonleaf#000 (leaf codes up to 126)"
fi

# tests/configs/gen_data/tdm.config on these CSV files and trees.
sed -e 's#"data/tdm/train.parquet"#"train.csv"#; s#"data/tdm/eval.parquet"#"eval.csv"#' \
    -e 's#dataset_type: ParquetDataset#dataset_type: CsvDataset with_header: true#' \
    -e 's#data/init_tree/#init_tree/#' \
    -e 's#layer_num_sample: \[[0-9, ]*\]#layer_num_sample: [0, 1, 1, 2, 2, 3, 4]#' \
    -e 's#num_epochs: 1#num_epochs: 2#' \
    "$ROOT/tests/configs/gen_data/tdm.config" > tdm.config
grep -q "init_tree/predict_edge_table.txt" tdm.config || fail "config paths not rewritten"

"$TZREC" train_eval --pipeline_config_path tdm.config --model_dir model 2> train.log || { tail -5 train.log; fail "train_eval"; }
QUANT_EMB=FP32 "$TZREC" export --pipeline_config_path model/pipeline.config --export_dir export \
  --asset_files init_tree/serving_tree 2> export.log || { cat export.log; fail "export"; }
for p in model embedding; do
  [[ -s export/$p/model.safetensors && -s export/$p/pipeline.config ]] || fail "export/$p is not a package"
done
[[ -s export/model/serving_tree && ! -e export/embedding/serving_tree ]] || fail "assets go to export/model only"
[[ ! -e export/model.safetensors ]] || fail "a tdm export has no package at its root"
grep -q '"click_seq' export/embedding/pipeline.config && fail "the embedding package has the history features"
grep -q 'user_id' export/embedding/pipeline.config && fail "the embedding package has user features"

# The embedding package's tables are the scorer's SEQUENCE-group tables (FP32: bit for bit).
$PY - <<'PY' || fail "export/embedding tables differ from the checkpoint's SEQUENCE tables"
import glob, json, struct
def load(path):
    b = open(path, "rb").read()
    n = struct.unpack("<Q", b[:8])[0]
    h = json.loads(b[8:8 + n])
    return {k: b[8 + n + v["data_offsets"][0]: 8 + n + v["data_offsets"][1]] for k, v in h.items() if k != "__metadata__"}
emb = load("export/embedding/model.safetensors")
ckpt = load(sorted(glob.glob("model/model.ckpt-*"), key=lambda p: int(p.rsplit("-", 1)[1]))[-1] + "/model.safetensors")
assert sorted(emb) == ["embedding_group.emb_impls.__BASE__.ebc.embedding_bags.cate_emb.weight",
                       "embedding_group.emb_impls.__BASE__.ebc.embedding_bags.item_id_emb.weight"], sorted(emb)
for t in ("cate_emb", "item_id_emb"):
    assert emb["embedding_group.emb_impls.__BASE__.ebc.embedding_bags.%s.weight" % t] == \
        ckpt["embedding_group.seq_emb_impls.__BASE__.ec_dict.8.embeddings.%s.weight" % t], t
PY

# Item embeddings of every item.
"$TZREC" predict --scripted_model_path export/embedding --predict_input_path items.csv \
  --predict_output_path item_emb --reserved_columns item_id,cate,brand --output_columns item_emb \
  --writer_type ParquetWriter 2> emb.log || { cat emb.log; fail "predict item_emb"; }
"$TZREC" parquet_cat item_emb/part-0.parquet > item_emb.json
[[ $(wc -l < item_emb.json) == "$NUM_ITEMS" ]] || fail "one item_emb per item"
$PY - <<'PY' || fail "item_emb is not 16 floats (item_id_emb 8 + cate_emb 8) per item"
import json
rows = [json.loads(l) for l in open("item_emb.json")]
assert all(len(r["item_emb"]) == 16 for r in rows), rows[0]
PY

"$TZREC" tdm_cluster_tree --item_input_path item_emb/part-0.parquet --item_id_field item_id \
  --embedding_field item_emb --attr_fields cate,brand --node_edge_output_file learnt_tree \
  --tree_output_dir learnt_tree --parallel 2 2> cluster.log || { cat cluster.log; fail "tdm_cluster_tree"; }
for f in node_table.txt edge_table.txt predict_edge_table.txt node_feature/part-0.parquet serving_tree; do
  [[ -s learnt_tree/$f ]] || fail "tdm_cluster_tree wrote no learnt_tree/$f"
done
[[ "$(head -1 learnt_tree/serving_tree)" == "7 2" ]] || fail "the learnt tree has 7 levels"

# Train on the learnt tree (the sampler checks its tables), export, retrieve.
EDIT='{"data_config.tdm_sampler.item_input_path":"learnt_tree/node_table.txt","data_config.tdm_sampler.edge_input_path":"learnt_tree/edge_table.txt","data_config.tdm_sampler.predict_edge_input_path":"learnt_tree/predict_edge_table.txt"}'
"$TZREC" train_eval --pipeline_config_path tdm.config --model_dir model_learnt --edit_config_json "$EDIT" 2> train2.log \
  || { tail -5 train2.log; fail "train_eval on the learnt tree"; }
"$TZREC" export --pipeline_config_path model_learnt/pipeline.config --export_dir export_learnt 2> export2.log \
  || { cat export2.log; fail "export the learnt tree's model"; }
"$TZREC" tdm_retrieval --scripted_model_path export_learnt/model --predict_input_path eval.csv \
  --predict_output_path recall --recall_num $RECALL_NUM --n_cluster 2 --reserved_columns user_id,item_id \
  --writer_type ParquetWriter 2> retrieval.log || { cat retrieval.log; fail "tdm_retrieval"; }
recall=$(sed -n 's/.*Retrieval Finished. Recall:\([0-9.e-]*\).*/\1/p' retrieval.log | tail -1)
[[ -n "$recall" ]] || { tail -5 retrieval.log; fail "no recall in the log"; }
"$TZREC" parquet_cat recall/part-0.parquet > recall.json
$PY - "$recall" "$RECALL_NUM" "$NUM_ITEMS" "$PREFIX" <<'PY' || fail "retrieval output or recall"
import json, sys
recall, k, n, prefix = float(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3]), sys.argv[4]
rows = [json.loads(l) for l in open("recall.json")]
assert len(rows) == 300, len(rows)
items = ["%s%d" % (prefix, i) for i in range(n)] if prefix else list(range(n))
for r in rows:
    assert len(r["recall_ids"]) == k and len(set(r["recall_ids"])) == k, r
    assert all(i in items for i in r["recall_ids"]), r
hits = sum((r["item_id"] if prefix else int(r["item_id"])) in r["recall_ids"] for r in rows)
assert abs(hits / len(rows) - recall) < 1e-9, (hits, recall)
baseline = k / n  # k distinct items drawn at random hold the row's item with probability k / n
print("recall %.3f, random %.3f" % (recall, baseline))
assert recall > baseline + 0.25, "recall %.3f is not above the random %.3f by 0.25" % (recall, baseline)
PY

# The initial tree's model retrieves too (its export's scorer package).
"$TZREC" tdm_retrieval --scripted_model_path export/model --predict_input_path eval.csv \
  --predict_output_path recall_init --recall_num $RECALL_NUM --writer_type ParquetWriter 2> retrieval0.log \
  || { cat retrieval0.log; fail "tdm_retrieval on the initial tree"; }

# Bad requests: one error line each.
expect_error() {
  local want=$1; shift
  if "$@" > bad.log 2>&1; then fail "expected an error: $*"; fi
  grep -q "^error: .*$want" bad.log || { cat bad.log; fail "error does not say '$want'"; }
}
expect_error "pass that" "$TZREC" tdm_retrieval --scripted_model_path export --predict_input_path eval.csv \
  --predict_output_path bad
expect_error "not the scorer of a tdm model" "$TZREC" tdm_retrieval --scripted_model_path export/embedding \
  --predict_input_path eval.csv --predict_output_path bad
expect_error "do not match" "$TZREC" tdm_retrieval --scripted_model_path export/model --predict_input_path eval.csv \
  --predict_output_path bad --edit_config_json '{"data_config.tdm_sampler.layer_num_sample":[0,1,1]}'
expect_error "item_emb" "$TZREC" tdm_cluster_tree --item_input_path items.csv --item_id_field item_id \
  --node_edge_output_file bad_tree
echo "OK tdm pipeline ($MODE ids): recall $recall"
}

pipeline int
pipeline hashed
