#!/usr/bin/env bash
# Zero-collision hashed tables on several ranks (docs/tzrec-compatibility.md §5.12): the zch
# config of tests/configs/gen_data (LFU with admission, LRU, distance-LFU; combo, lookup and match
# features; WIDE twins) under `tzrec launch`:
#   - the zch tables are planned row_wise on every rank;
#   - 2 ranks training 0..17, then continuing to 29 end with exactly the files of 2 ranks
#     training 0..29 at once (step 18 is an eviction step of every table);
#   - the 2-rank checkpoint continues on 1 process and on 3 ranks, exports and predicts;
#   - check_config --world_size refuses a zch table constrained away from row_wise, and a
#     zch_size too small for the ranks, each in one line naming the field.
# Usage: zch_distributed_test.sh <tzrec binary> <repo root>
set -euo pipefail
TZREC=$1
ROOT=$2
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT
CMP=$ROOT/tests/tools/compare_safetensors.py
export OMP_NUM_THREADS=1 TORCH_MANUAL_SEED=1
fail() { echo "FAIL: $*"; exit 1; }

"$TZREC" gen_data --pipeline_config_path "$ROOT/tests/configs/gen_data/zch.config" --output_dir "$WORK/data" \
  --num_rows 6000 --num_eval_rows 500 2> /dev/null
CONFIG=$WORK/zch_steps.config
sed "s/num_epochs: 1/num_steps: 30/" "$WORK/data/pipeline.config" > "$CONFIG"
run() {  # run <ranks> <model_dir> <num_steps> [extra flags]
  local ranks=$1 dir=$2 steps=$3; shift 3
  local edit='{"data_config.batch_size":64,"train_config.save_checkpoints_steps":1000,"train_config.num_steps":'$steps'}'
  local cmd=("$TZREC")
  if (( ranks > 1 )); then cmd+=(launch --nproc-per-node "$ranks" --standalone --); fi
  "${cmd[@]}" train_eval --pipeline_config_path "$CONFIG" --model_dir "$dir" --edit_config_json "$edit" "$@" \
    > "$dir.log" 2>&1 || { tail -30 "$dir.log"; fail "train_eval on $ranks rank(s), $dir, $steps steps"; }
}

# 1. Two ranks, row_wise zch tables; resumed = uninterrupted.
run 2 "$WORK/full" 30
grep -E "^user_id_emb +200 x 8 .* row_wise " "$WORK/full.log" > /dev/null || { grep -A20 "sharding plan" "$WORK/full.log"; fail "user_id_emb is not row_wise"; }
run 2 "$WORK/resumed" 18
run 2 "$WORK/resumed" 30 --continue_train
grep -q "training continues at step 18" "$WORK/resumed.log" || { tail -30 "$WORK/resumed.log"; fail "did not resume at 18"; }
for f in model.safetensors optimizer.safetensors model-000000-of-000002.safetensors model-000001-of-000002.safetensors \
         optimizer-000000-of-000002.safetensors optimizer-000001-of-000002.safetensors; do
  /usr/bin/python3 "$CMP" "$WORK/full/model.ckpt-29/$f" "$WORK/resumed/model.ckpt-29/$f" \
    || fail "$f differs between the resumed and the uninterrupted 2-rank run"
done
/usr/bin/python3 - "$WORK/full/model.ckpt-29" <<'PY' || fail "zch state of the 2-rank checkpoint"
# The place buffers are row blocks of each rank: a held id's row lies in the block of its owner,
# floor(mix64(id ^ 0x5851f42d4c957f2d) * 2 / 2^64) (docs/tzrec-compatibility.md §5.13 "Ranks").
import json, struct, sys
def read(path):
    with open(path, "rb") as f:
        n = struct.unpack("<Q", f.read(8))[0]
        header = json.loads(f.read(n))
        data = f.read()
    return {k: (v, data) for k, v in header.items() if k != "__metadata__"}
M = (1 << 64) - 1
def owner(i):
    x = (i ^ 0x5851F42D4C957F2D) & M
    x = ((x ^ (x >> 30)) * 0xBF58476D1CE4E5B9) & M
    x = ((x ^ (x >> 27)) * 0x94D049BB133111EB) & M
    x ^= x >> 31
    return (x * 2) >> 64
def ints(entry):
    meta, data = entry
    b, e = meta["data_offsets"]
    return list(struct.unpack(f"<{(e - b) // 8}q", data[b:e]))
held = 0
for rank in (0, 1):
    tensors = read(f"{sys.argv[1]}/model-{rank:06d}-of-000002.safetensors")
    for key in tensors:
        if not key.endswith("._mch_sorted_raw_ids"):
            continue
        ids = ints(tensors[key])
        slots = ints(tensors[key.replace("_mch_sorted_raw_ids", "_mch_remapped_ids_mapping")])
        for i, s in zip(ids, slots):
            if i == (1 << 63) - 1:
                continue
            assert owner(i) == rank, (key, i, rank)
            held += 1
assert held > 100, held
print(f"{held} held ids, each in its owner's block")
PY
echo "2 ranks: zch tables row_wise, resumed run equals the uninterrupted one"

# 2. The 2-rank checkpoint on 1 process and on 3 ranks; export and predict.
cp -r "$WORK/full" "$WORK/one"
run 1 "$WORK/one" 36 --continue_train
grep -q "training continues at step 30" "$WORK/one.log" || { tail -30 "$WORK/one.log"; fail "1 process did not resume"; }
cp -r "$WORK/full" "$WORK/three"
run 3 "$WORK/three" 36 --continue_train
grep -q "training continues at step 30" "$WORK/three.log" || { tail -30 "$WORK/three.log"; fail "3 ranks did not resume"; }
grep -q "Eval Result" "$WORK/three.log" || fail "3 ranks did not evaluate"
# Export of the 2-rank checkpoint (place buffers and shards assembled) predicts what predict from
# the checkpoint on one process predicts.
QUANT_EMB=FP32 "$TZREC" export --pipeline_config_path "$CONFIG" --checkpoint_path "$WORK/full/model.ckpt-29" --export_dir "$WORK/export" \
  > "$WORK/export.log" 2>&1 || { tail -20 "$WORK/export.log"; fail "export of the 2-rank checkpoint"; }
for src in "--scripted_model_path $WORK/export" "--pipeline_config_path $CONFIG --checkpoint_path $WORK/full/model.ckpt-29"; do
  out="$WORK/pred_$(echo "$src" | cut -c3-8)"
  # shellcheck disable=SC2086
  "$TZREC" predict $src --predict_input_path "$WORK/data/eval.parquet" --predict_output_path "$out" \
    --output_columns probs 2> "$WORK/predict.log" || { tail -20 "$WORK/predict.log"; fail "predict $src"; }
done
"$TZREC" parquet_cat "$WORK/pred_script/part-0.parquet" > "$WORK/pred_export.jsonl"
"$TZREC" parquet_cat "$WORK/pred_pipeli/part-0.parquet" > "$WORK/pred_ckpt.jsonl"
/usr/bin/python3 - "$WORK/pred_export.jsonl" "$WORK/pred_ckpt.jsonl" <<'PY' || fail "export and checkpoint predictions differ"
import json, sys
a = [json.loads(l)["probs"] for l in open(sys.argv[1])]
b = [json.loads(l)["probs"] for l in open(sys.argv[2])]
assert len(a) == len(b) == 500, (len(a), len(b))
assert max(abs(x - y) for x, y in zip(a, b)) < 1e-6
assert all(0 < x < 1 for x in a)
PY
echo "2-rank checkpoint: continued on 1 process and on 3 ranks, exported, predicted"

# 3. Config errors on several ranks.
/usr/bin/python3 - "$CONFIG" "$WORK" <<'PY'
import sys
text = open(sys.argv[1]).read()
user = '    feature_name: "user_id"\n    expression: "user:user_id"\n    embedding_dim: 8\n'
assert user in text
open(f"{sys.argv[2]}/constrained.config", "w").write(
    text.replace(user, user + '    embedding_constraints { sharding_types: "table_wise" }\n'))
assert "zch_size: 50\n" in text
open(f"{sys.argv[2]}/tiny.config", "w").write(text.replace("zch_size: 50\n", "zch_size: 3\n"))
PY
out=$("$TZREC" check_config --pipeline_config_path "$WORK/constrained.config" --world_size 2 2>&1) && fail "table_wise zch accepted"
echo "$out" | grep -qE "feature_configs\[0\].id_feature.embedding_constraints: embedding table 'user_id_emb(_wide)?' has zch, which is sharded row_wise only" \
  || { echo "$out"; fail "constraint message"; }
out=$("$TZREC" check_config --pipeline_config_path "$WORK/tiny.config" --world_size 2 2>&1) && fail "zch_size 3 on 2 ranks accepted"
echo "$out" | grep -q "feature_configs\[2\].id_feature.zch.zch_size: 3 rows split row-wise over 2 ranks leave rank 1 1 row(s)" \
  || { echo "$out"; fail "tiny zch_size message"; }
echo OK
