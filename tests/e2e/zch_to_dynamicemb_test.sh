#!/usr/bin/env bash
# tzrec zch_to_dynamicemb_convert (TorchEasyRec's tools/dynamicemb/zch_to_dynamicemb_convert,
# docs/tzrec-compatibility.md §5.13) on TorchEasyRec's test pair zch_to_dynamicemb_convert_src /
# _tgt.config (id_1: zch lfu → dynamicemb LFU, id_2: zch lru → dynamicemb STEP):
#  1. the zch model trains 8 steps on gen_data's rows with eviction_interval 1, so every id of
#     train.parquet enters its zch table at the step it is first seen (zch_size ≫ the ids) and is
#     held at the end; a high sparse learning rate moves the rows well away from their init;
#  2. the converted checkpoint holds exactly the zch tables' ids, each with its zch row bit for bit
#     and its score (LFU: _mch_counts, STEP: _mch_last_access_iter), and every other tensor as is;
#  3. predict on train.parquet (every id held) gives bit-identical outputs for the zch model's
#     checkpoint and the converted one, and `tzrec eval` the same metrics — which would fail if an
#     id were missing (it would read the evaluation initializer's 0) or read another row; as a
#     control, the converted checkpoint with its tables emptied (row_live 0) predicts otherwise;
#  4. train_eval of the target config with --fine_tune_checkpoint continues from the converted
#     tables (their step goes on from 8) with fresh optimizers;
#  5. an existing output directory and --world_size 0 are one-line errors; --world_size 2 writes
#     the same checkpoint (it restores on any world size).
set -euo pipefail
TZREC=$1
ROOT=$2
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT
cd "$WORK"
fail() { echo "FAIL: $*"; exit 1; }
PY=/usr/bin/python3
CONFIGS=$ROOT/tests/configs/torcheasyrec

"$TZREC" gen_data --pipeline_config_path "$CONFIGS/zch_to_dynamicemb_convert_src.config" --output_dir W \
  --num_rows 256 --num_eval_rows 64 2> gen.log || { cat gen.log; fail "gen_data"; }
sed -e 's/zch_size: \([0-9]*\)/zch_size: \1 eviction_interval: 1/' -e 's/num_epochs: 1/num_steps: 8/' \
  W/pipeline.config > src.config
grep -q "eviction_interval: 1" src.config || fail "src.config: no zch_size to edit"
# The target on the same data (TorchEasyRec's config has no input paths).
sed -e "s#train_input_path: \"\"#train_input_path: \"$WORK/W/train.parquet\"#" \
  -e "s#eval_input_path: \"\"#eval_input_path: \"$WORK/W/eval.parquet\"#" -e 's/num_epochs: 1/num_steps: 8/' \
  "$CONFIGS/zch_to_dynamicemb_convert_tgt.config" > tgt.config
# One reader: the same batches (predictions are compared bit for bit) in every run.
EDIT='{"data_config.batch_size":32,"data_config.num_workers":1,"train_config.sparse_optimizer.adagrad_optimizer.lr":0.5}'

"$TZREC" train_eval --pipeline_config_path src.config --model_dir src_model --edit_config_json "$EDIT" \
  2> src_train.log || { tail -5 src_train.log; fail "train_eval of the zch config"; }
[[ -d src_model/model.ckpt-7 ]] || fail "no src_model/model.ckpt-7"

"$TZREC" zch_to_dynamicemb_convert --source_checkpoint_path src_model \
  --source_pipeline_config_path src_model/pipeline.config --target_pipeline_config_path tgt.config \
  --save_dir converted 2> convert.log || { cat convert.log; fail "zch_to_dynamicemb_convert"; }
cat convert.log
for t in id_1_emb id_2_emb; do
  grep -qE "table '$t': ([0-9]+) id\(s\) held by the zch table, \1 loaded into the dynamic table .*, 0 dropped; step 8" \
    convert.log || fail "$t: not every held id loaded"
done
grep -q "table 'id_1_emb': LFU scores from _mch_counts" convert.log || fail "id_1_emb: LFU scores"
grep -q "table 'id_2_emb': STEP scores from _mch_last_access_iter" convert.log || fail "id_2_emb: STEP scores"
[[ -f converted/model.ckpt-0/model.safetensors ]] || fail "no converted/model.ckpt-0"

# 2. The tensors, read independently of the engine.
cat > check.py <<'PY'
import importlib.util, json, sys
import numpy as np
spec = importlib.util.spec_from_file_location("st", sys.argv[1])
st = importlib.util.module_from_spec(spec)
spec.loader.exec_module(st)
mode = sys.argv[2]
G = "embedding_group.emb_impls.__BASE__."
if mode == "converted":
    src, tgt = st.read(sys.argv[3]), st.read(sys.argv[4])
    train_ids = json.load(open(sys.argv[5]))
    for t, buf in (("id_1_emb", "_mch_counts"), ("id_2_emb", "_mch_last_access_iter")):
        m = G + "mc_ebc._managed_collision_collection._managed_collision_modules." + t + "."
        ids, rows, scores = src[m + "_mch_sorted_raw_ids"], src[m + "_mch_remapped_ids_mapping"], src[m + buf]
        weight = src[G + "mc_ebc._embedding_module.embedding_bags." + t + ".weight"]
        d = G + "dynamicemb_ebc.dynamic_tables." + t + "."
        live, keys, conv_scores = tgt[d + "row_live"], tgt[d + "row_keys"], tgt[d + "row_scores"]
        conv_weight = tgt[G + "dynamicemb_ebc._embedding_module.embedding_bags." + t + ".weight"]
        empty = np.iinfo(np.int64).max
        held = {int(i): (int(r), int(s)) for i, r, s in zip(ids[:-1], rows[:-1], scores[:-1]) if i != empty}
        conv = {int(keys[r]): r for r in range(len(live)) if live[r]}
        assert set(held) == set(train_ids[t]), f"{t}: the zch table does not hold every training id"
        assert set(conv) == set(held), f"{t}: converted ids {len(conv)} != held {len(held)}"
        for i, (r, s) in held.items():
            assert np.array_equal(conv_weight[conv[i]], weight[r]), f"{t}: id {i} row differs"
            assert conv_scores[conv[i]] == s, f"{t}: id {i} score {conv_scores[conv[i]]} != {s}"
        assert tgt[d + "step"][0] == 8, tgt[d + "step"]
        print(f"{t}: {len(held)} ids, rows and scores as in the zch table")
    other = [n for n in tgt if ".dynamicemb_ebc." not in n]
    for n in other:
        assert np.array_equal(src[n], tgt[n]), n
    print(f"{len(other)} other tensors as in the zch checkpoint")
elif mode == "empty":  # copy sys.argv[3] to sys.argv[4] with every row_live 0
    blob = bytearray(open(sys.argv[3], "rb").read())
    n = int.from_bytes(blob[:8], "little")
    header = json.loads(blob[8:8 + n])
    for name, info in header.items():
        if name.endswith(".row_live"):
            b, e = info["data_offsets"]
            blob[8 + n + b:8 + n + e] = bytes(e - b)
    open(sys.argv[4], "wb").write(blob)
elif mode == "step":  # the dynamic tables' step
    tensors = st.read(sys.argv[3])
    print(" ".join(str(int(tensors[G + f"dynamicemb_ebc.dynamic_tables.{t}.step"][0])) for t in ("id_1_emb", "id_2_emb")))
PY
"$TZREC" parquet_cat W/train.parquet --columns id_1,id_2 | $PY -c '
import json, sys
rows = [json.loads(l) for l in sys.stdin]
json.dump({"id_1_emb": sorted({r["id_1"] for r in rows}), "id_2_emb": sorted({r["id_2"] for r in rows})}, sys.stdout)
' > train_ids.json
$PY check.py "$ROOT/tests/tools/compare_safetensors.py" converted src_model/model.ckpt-7/model.safetensors \
  converted/model.ckpt-0/model.safetensors train_ids.json || fail "converted tensors"

# 3. The converted ids read their trained rows.
predict() {  # predict <config> <checkpoint> <out>
  "$TZREC" predict --pipeline_config_path "$1" --checkpoint_path "$2" --predict_input_path W/train.parquet \
    --predict_output_path "$3" --writer_type CsvWriter --batch_size 64 --edit_config_json '{"data_config.num_workers":1}' \
    2> "$3.log" || { tail -5 "$3.log"; fail "predict $2"; }
}
predict src_model/pipeline.config src_model/model.ckpt-7 pred_zch
predict tgt.config converted/model.ckpt-0 pred_converted
cmp -s pred_zch/part-0.csv pred_converted/part-0.csv || fail "predictions of the converted checkpoint differ"
mkdir -p emptied/model.ckpt-0
cp converted/model.ckpt-0/*.json converted/model.ckpt-0/optimizer.safetensors emptied/model.ckpt-0/
$PY check.py "$ROOT/tests/tools/compare_safetensors.py" empty converted/model.ckpt-0/model.safetensors \
  emptied/model.ckpt-0/model.safetensors
predict tgt.config emptied/model.ckpt-0 pred_emptied
if cmp -s pred_zch/part-0.csv pred_emptied/part-0.csv; then fail "control: emptied tables predict the same"; fi
echo "predict: the converted checkpoint gives the zch checkpoint's outputs bit for bit ($(($(wc -l < pred_zch/part-0.csv) - 1)) rows); with its tables emptied it does not"
evaluate() {  # evaluate <config> <checkpoint> <dir>: the metrics line
  "$TZREC" eval --pipeline_config_path "$1" --checkpoint_path "$2" --eval_input_path W/train.parquet --model_dir "$3" \
    2> "$3.log" | tail -1
}
zch_metrics=$(evaluate src_model/pipeline.config src_model/model.ckpt-7 eval_zch)
converted_metrics=$(evaluate tgt.config converted/model.ckpt-0 eval_converted)
[[ -n $zch_metrics && $zch_metrics == "$converted_metrics" ]] || fail "eval: '$zch_metrics' vs '$converted_metrics'"
echo "eval: $converted_metrics for both"

# 4. Fine-tuning the dynamicemb model from the converted checkpoint.
"$TZREC" train_eval --pipeline_config_path tgt.config --model_dir fine_tuned \
  --fine_tune_checkpoint converted/model.ckpt-0 --edit_config_json "$EDIT" 2> fine_tune.log \
  || { tail -5 fine_tune.log; fail "train_eval --fine_tune_checkpoint"; }
grep -q "fine_tune_checkpoint: loaded 32 of 32 model tensors from converted/model.ckpt-0" fine_tune.log \
  || { grep fine_tune fine_tune.log; fail "fine-tune did not load every tensor"; }
grep -q "holds no optimizer state; optimizers start fresh" fine_tune.log || fail "fine-tune: optimizer state"
steps=$($PY check.py "$ROOT/tests/tools/compare_safetensors.py" step fine_tuned/model.ckpt-7/model.safetensors)
[[ $steps == "16 16" ]] || fail "fine-tuned dynamic tables at steps '$steps', expected 16 16 (8 converted + 8 trained)"
echo "fine-tune: loaded the converted checkpoint, dynamic tables continued to step 16"

# 5. Errors.
if "$TZREC" zch_to_dynamicemb_convert --source_checkpoint_path src_model/model.ckpt-7 \
  --source_pipeline_config_path src_model/pipeline.config --target_pipeline_config_path tgt.config \
  --save_dir converted > again.log 2>&1; then fail "converted into an existing model.ckpt-0"; fi
[[ $(wc -l < again.log) == 1 ]] && grep -q "^error: converted/model.ckpt-0 already exists; remove it or choose another --save_dir$" again.log \
  || { cat again.log; fail "existing output: message"; }
# --world_size: the checkpoint restores on any world size, so a 2-rank job's is the same file (the
# rows no id holds are drawn afresh: the same seed for both).
for w in 1 2; do
  TORCH_MANUAL_SEED=5 "$TZREC" zch_to_dynamicemb_convert --source_checkpoint_path src_model/model.ckpt-7 \
    --source_pipeline_config_path src_model/pipeline.config --target_pipeline_config_path tgt.config \
    --save_dir "ranks$w" --world_size $w 2> "ranks$w.log" || { cat "ranks$w.log"; fail "--world_size $w"; }
done
grep -q "restores on any world size, 2 ranks included" ranks2.log || { cat ranks2.log; fail "--world_size 2: log"; }
cmp ranks1/model.ckpt-0/model.safetensors ranks2/model.ckpt-0/model.safetensors \
  || fail "--world_size 2 wrote another checkpoint than --world_size 1"
status=0
"$TZREC" zch_to_dynamicemb_convert --source_checkpoint_path src_model/model.ckpt-7 \
  --source_pipeline_config_path src_model/pipeline.config --target_pipeline_config_path tgt.config \
  --save_dir zero --world_size 0 > zero.log 2>&1 || status=$?
[[ $status == 2 && $(wc -l < zero.log) == 1 ]] && grep -q "^error: .*--world_size must be at least 1, got 0" zero.log \
  || { cat zero.log; fail "--world_size 0"; }
[[ ! -e zero ]] || fail "--world_size 0 wrote something"
echo OK
