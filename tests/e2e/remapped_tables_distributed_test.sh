#!/usr/bin/env bash
# Zero-collision hashed and dynamic embedding tables on several ranks
# (docs/tzrec-compatibility.md §5.12, §5.13): the zch config of tests/configs/gen_data (LFU with
# admission, LRU, distance-LFU; combo, lookup and match features; WIDE twins), then its dynamicemb
# config (STEP with frequency admission, LFU, NO_EVICTION; TIMESTAMP swapped for STEP, whose
# scores depend on the clock), each under `tzrec launch`:
#   - the tables are planned row_wise on every rank;
#   - 2 ranks training 0..17, then continuing to 29 end with exactly the files of 2 ranks
#     training 0..29 at once (step 18 is an eviction step of every zch table);
#   - every held id lies in the row block of the rank owning it;
#   - the 2-rank checkpoint continues on 1 process and on 3 ranks, exports and predicts;
#   - check_config --world_size refuses a table constrained away from row_wise, and a zch_size
#     too small for the ranks, each in one line naming the field.
# Usage: remapped_tables_distributed_test.sh <tzrec binary> <repo root>
set -euo pipefail
TZREC=$1
ROOT=$2
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT
CMP=$ROOT/tests/tools/compare_safetensors.py
export OMP_NUM_THREADS=1 TORCH_MANUAL_SEED=1
fail() { echo "FAIL: $*"; exit 1; }

# The held ids of a 2-rank checkpoint, each checked to lie in the row block of the rank owning it,
# floor(mix64(id ^ 0x5851f42d4c957f2d) * 2 / 2^64) (docs/tzrec-compatibility.md §5.13 "Ranks"): zch
# place buffers (id, row), dynamic tables' row_keys / row_live (rank r's rows are its block).
check_blocks() {  # check_blocks <kind> <checkpoint dir>
  /usr/bin/python3 - "$1" "$2" <<'PY' || fail "$1 state of the 2-rank checkpoint"
import json, struct, sys
kind, ckpt = sys.argv[1], sys.argv[2]
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
def values(entry, fmt, size):
    meta, data = entry
    b, e = meta["data_offsets"]
    return list(struct.unpack(f"<{(e - b) // size}{fmt}", data[b:e]))
held = 0
for rank in (0, 1):
    tensors = read(f"{ckpt}/model-{rank:06d}-of-000002.safetensors")
    for key in tensors:
        if kind == "zch" and key.endswith("._mch_sorted_raw_ids"):
            ids = [i for i in values(tensors[key], "q", 8) if i != (1 << 63) - 1]
        elif kind == "dynamicemb" and key.endswith(".row_keys"):
            live = values(tensors[key.replace("row_keys", "row_live")], "B", 1)
            ids = [i for i, l in zip(values(tensors[key], "q", 8), live) if l]
        else:
            continue
        for i in ids:
            assert owner(i) == rank, (key, i, rank)
        held += len(ids)
assert held > 100, held
print(f"{kind}: {held} held ids, each in its owner's block")
PY
}

# A 2-rank checkpoint holds each dynamic table's rows in use (docs/tzrec-compatibility.md §5.13,
# "Checkpoints"): rank r's blocks are U_r rows of state at Σ_{q<r} U_q and U_r + 2 weight rows at
# Σ_{q<r} (U_q + 2), U = the dense tensor rows_in_use; some table is not full, so its checkpoint is
# smaller than the full layout (2 · capacity state rows).
check_rows_in_use() {  # check_rows_in_use <checkpoint dir>
  /usr/bin/python3 - "$1" <<'PY' || fail "dynamicemb: the 2-rank checkpoint does not hold the rows in use"
import json, struct, sys
ckpt = sys.argv[1]
def header(path):
    with open(path, "rb") as f:
        n = struct.unpack("<Q", f.read(8))[0]
        h = json.loads(f.read(n))
        data = f.read()
    meta = {}
    for k, v in h.pop("__metadata__", {}).items():
        if k in h:  # a block's entry: {"name", "global_shape", "offsets"} as JSON
            meta[k] = json.loads(v)
    return h, meta, data
def ints(h, data, key):
    b, e = h[key]["data_offsets"]
    return list(struct.unpack(f"<{(e - b) // 8}q", data[b:e]))
dense, _, data = header(f"{ckpt}/model.safetensors")
checked, smaller = 0, 0
for key in dense:
    if not key.endswith(".rows_in_use"):
        continue
    prefix = key[: -len(".rows_in_use")]
    table = prefix.split(".")[-1]
    used, capacity = ints(dense, data, key), ints(dense, data, prefix + ".capacity")[0]
    assert len(used) == 2 and all(0 <= u <= capacity for u in used), (table, used, capacity)
    for rank in (0, 1):
        h, meta, _ = header(f"{ckpt}/model-{rank:06d}-of-000002.safetensors")
        blocks = {m["name"]: (h[k]["shape"], m["global_shape"], m["offsets"]) for k, m in meta.items()}
        shape, total, offsets = blocks[prefix + ".row_keys"]
        assert shape == [used[rank]] and total == [sum(used)] and offsets[0] == sum(used[:rank]), (table, rank, blocks[prefix + ".row_keys"])
        weight = [v for n, v in blocks.items() if n.endswith(f"embedding_bags.{table}.weight")]
        assert len(weight) == 1, table
        shape, total, offsets = weight[0]
        assert shape[0] == used[rank] + 2 and total[0] == sum(used) + 4 and offsets[0] == sum(used[:rank]) + 2 * rank, (table, rank, weight[0])
    checked += 1
    smaller += sum(used) < 2 * capacity
assert checked >= 6 and smaller >= 1, (checked, smaller)
print(f"dynamicemb: {checked} tables saved with their rows in use ({smaller} smaller than the full layout)")
PY
}

check_kind() {  # check_kind <zch | dynamicemb>
  local kind=$1 work=$WORK/$1
  mkdir -p "$work"
  "$TZREC" gen_data --pipeline_config_path "$ROOT/tests/configs/gen_data/$kind.config" --output_dir "$work/data" \
    --num_rows 6000 --num_eval_rows 500 2> /dev/null
  CONFIG=$work/steps.config
  sed -e "s/num_epochs: 1/num_steps: 30/" -e 's/score_strategy: "TIMESTAMP"/score_strategy: "STEP"/' \
    "$work/data/pipeline.config" > "$CONFIG"

  # 1. Two ranks, row_wise tables; resumed = uninterrupted.
  run 2 "$work/full" 30
  grep -E "^user_id_emb +[0-9]+ x 8 .* row_wise " "$work/full.log" > /dev/null \
    || { grep -A20 "sharding plan" "$work/full.log"; fail "$kind: user_id_emb is not row_wise"; }
  run 2 "$work/resumed" 18
  run 2 "$work/resumed" 30 --continue_train
  grep -q "training continues at step 18" "$work/resumed.log" || { tail -30 "$work/resumed.log"; fail "$kind: did not resume at 18"; }
  for f in model.safetensors optimizer.safetensors model-000000-of-000002.safetensors model-000001-of-000002.safetensors \
           optimizer-000000-of-000002.safetensors optimizer-000001-of-000002.safetensors; do
    /usr/bin/python3 "$CMP" "$work/full/model.ckpt-29/$f" "$work/resumed/model.ckpt-29/$f" > /dev/null \
      || fail "$kind: $f differs between the resumed and the uninterrupted 2-rank run"
  done
  check_blocks "$kind" "$work/full/model.ckpt-29"
  if [[ $kind == dynamicemb ]]; then check_rows_in_use "$work/full/model.ckpt-29"; fi
  echo "$kind, 2 ranks: tables row_wise, resumed run equals the uninterrupted one"

  # 2. The 2-rank checkpoint on 1 process and on 3 ranks; export and predict.
  cp -r "$work/full" "$work/one"
  run 1 "$work/one" 36 --continue_train
  grep -q "training continues at step 30" "$work/one.log" || { tail -30 "$work/one.log"; fail "$kind: 1 process did not resume"; }
  cp -r "$work/full" "$work/three"
  run 3 "$work/three" 36 --continue_train
  grep -q "training continues at step 30" "$work/three.log" || { tail -30 "$work/three.log"; fail "$kind: 3 ranks did not resume"; }
  grep -q "Eval Result" "$work/three.log" || fail "$kind: 3 ranks did not evaluate"
  # Export of the 2-rank checkpoint (state and shards assembled) predicts what predict from the
  # checkpoint on one process predicts.
  QUANT_EMB=FP32 "$TZREC" export --pipeline_config_path "$CONFIG" --checkpoint_path "$work/full/model.ckpt-29" \
    --export_dir "$work/export" > "$work/export.log" 2>&1 || { tail -20 "$work/export.log"; fail "$kind: export"; }
  if [[ $kind == dynamicemb ]]; then
    # The package holds each dynamic table's live rows only: weight [L + 2, dim], state [L], all live.
    /usr/bin/python3 - "$ROOT/tests/tools" "$work/export/model.safetensors" "$work/one/model.ckpt-35/model.safetensors" <<'PY' || fail "$kind: export is not live rows only"
import sys
sys.path.insert(0, sys.argv[1])
from compare_safetensors import read
t, one = read(sys.argv[2]), read(sys.argv[3])  # the package; a one-process checkpoint (every row)
tables = [n[:-len(".row_live")] for n in t if n.endswith(".row_live")]
assert tables
cut = {}
for prefix in tables:
    live, keys = t[prefix + ".row_live"], t[prefix + ".row_keys"]
    table = prefix.split(".")[-1]
    weight = [w for n, w in t.items() if n.endswith(f"embedding_bags.{table}.weight")]
    assert len(weight) == 1, (table, [n for n in t if table in n])
    assert live.all() and len(set(keys.tolist())) == len(keys), table
    assert weight[0].shape[0] == len(live) + 2, (table, weight[0].shape, len(live))
    rows = len(one[prefix + ".row_live"])
    assert len(live) <= rows, (table, len(live), rows)
    cut[table] = (len(live), rows)
print("export: live rows only (live, rows):", cut)
assert any(live < rows for live, rows in cut.values()), "no table was cut"
PY
  fi
  for src in "--scripted_model_path $work/export" "--pipeline_config_path $CONFIG --checkpoint_path $work/full/model.ckpt-29"; do
    out="$work/pred_$(echo "$src" | cut -c3-8)"
    # shellcheck disable=SC2086
    "$TZREC" predict $src --predict_input_path "$work/data/eval.parquet" --predict_output_path "$out" \
      --output_columns probs 2> "$work/predict.log" || { tail -20 "$work/predict.log"; fail "$kind: predict $src"; }
  done
  "$TZREC" parquet_cat "$work/pred_script/part-0.parquet" > "$work/pred_export.jsonl"
  "$TZREC" parquet_cat "$work/pred_pipeli/part-0.parquet" > "$work/pred_ckpt.jsonl"
  /usr/bin/python3 - "$work/pred_export.jsonl" "$work/pred_ckpt.jsonl" <<'PY' || fail "$kind: export and checkpoint predictions differ"
import json, sys
a = [json.loads(l)["probs"] for l in open(sys.argv[1])]
b = [json.loads(l)["probs"] for l in open(sys.argv[2])]
assert len(a) == len(b) == 500, (len(a), len(b))
assert max(abs(x - y) for x, y in zip(a, b)) < 1e-6
assert all(0 < x < 1 for x in a)
PY
  echo "$kind, 2-rank checkpoint: continued on 1 process and on 3 ranks, exported, predicted"

  # 3. A table constrained away from row_wise.
  /usr/bin/python3 - "$CONFIG" "$work" <<'PY'
import sys
text = open(sys.argv[1]).read()
user = '    feature_name: "user_id"\n    expression: "user:user_id"\n    embedding_dim: 8\n'
assert user in text
open(f"{sys.argv[2]}/constrained.config", "w").write(
    text.replace(user, user + '    embedding_constraints { sharding_types: "table_wise" }\n'))
PY
  out=$("$TZREC" check_config --pipeline_config_path "$work/constrained.config" --world_size 2 2>&1) && fail "$kind: table_wise accepted"
  grep -qE "feature_configs\[0\].id_feature.embedding_constraints: embedding table 'user_id_emb(_wide)?' has $kind, which is sharded row_wise only" <<< "$out" \
    || { echo "$out"; fail "$kind: constraint message"; }
}

run() {  # run <ranks> <model_dir> <num_steps> [extra flags]
  local ranks=$1 dir=$2 steps=$3; shift 3
  local edit='{"data_config.batch_size":64,"train_config.save_checkpoints_steps":1000,"train_config.num_steps":'$steps'}'
  local cmd=("$TZREC")
  if (( ranks > 1 )); then cmd+=(launch --nproc-per-node "$ranks" --standalone --); fi
  "${cmd[@]}" train_eval --pipeline_config_path "$CONFIG" --model_dir "$dir" --edit_config_json "$edit" "$@" \
    > "$dir.log" 2>&1 || { tail -30 "$dir.log"; fail "train_eval on $ranks rank(s), $dir, $steps steps"; }
}

check_kind zch
# A zch_size too small for the ranks.
/usr/bin/python3 - "$WORK/zch/steps.config" "$WORK/tiny.config" <<'PY'
import sys
text = open(sys.argv[1]).read()
assert "zch_size: 50\n" in text
open(sys.argv[2], "w").write(text.replace("zch_size: 50\n", "zch_size: 3\n"))
PY
out=$("$TZREC" check_config --pipeline_config_path "$WORK/tiny.config" --world_size 2 2>&1) && fail "zch_size 3 on 2 ranks accepted"
grep -q "feature_configs\[2\].id_feature.zch.zch_size: 3 rows split row-wise over 2 ranks leave rank 1 1 row(s)" <<< "$out" \
  || { echo "$out"; fail "tiny zch_size message"; }
check_kind dynamicemb
echo OK
