#!/usr/bin/env bash
# train_config.delta_embedding_dump_config (TorchEasyRec's delta embedding dump,
# docs/tzrec-compatibility.md §5.15), end to end. The expected keys are computed here from the data
# rows each step read, the expected values are the rows of the checkpoint saved at the dump's step
# (read from its safetensors files by the Python below, not by this engine), and the INT8 rows are
# re-quantized here with numpy from those checkpoint rows, following TorchEasyRec's
# quant_util._quantize_quint8_rowwise_f16 formulas:
#  1. DeepFM (plain tables), one process, dumps every 3 steps of 8: files at steps 3 and 6 and the
#     final one at 7; each table's keys are the ids its features read in the interval's batches.
#  2. quant_type DELTA_EMBEDDING_QUANT_INT8: the uint8 rows equal numpy's quantization.
#  3. zero-collision hashed tables: each key's row is the one its table serves at that step (its
#     own row while held, the fallback row otherwise), and the ids the evictions between two dumps
#     admitted or evicted are in the later dump.
#  4. dynamic tables: every key is held by the table at the dump's step, with its row.
#  5. two ranks, tables sharded row_wise: one file per rank per dump; each rank's keys lie in its
#     row block and carry the checkpoint's values; zero-collision hashed tables on two ranks: each
#     key carries the row its rank's module serves.
#  6. config errors: both intervals, a zero interval, INT8 with an odd embedding_dim,
#     feature_store_config.
# Usage: delta_embedding_dump_test.sh <tzrec binary> <repo root>
set -uo pipefail
TZREC=$1
ROOT=$2
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT
fail() { echo "FAIL: $*"; exit 1; }
PY=/usr/bin/python3

cat > "$WORK/check.py" <<'PY'
import glob, json, os, struct, subprocess, sys
import numpy as np

TZREC = os.environ["TZREC"]
DTYPES = {"F32": np.float32, "I64": np.int64, "U8": np.uint8, "I32": np.int32, "F16": np.float16}

def read_safetensors(path):
    data = open(path, "rb").read()
    n = struct.unpack("<Q", data[:8])[0]
    header = json.loads(data[8:8 + n])
    meta = header.pop("__metadata__", {})
    out = {}
    for name, h in header.items():
        a, b = h["data_offsets"]
        out[name] = (np.frombuffer(data[8 + n + a:8 + n + b], dtype=DTYPES[h["dtype"]]).reshape(h["shape"]),
                     json.loads(meta[name]) if name in meta else None)
    return out

def checkpoint(model_dir, step):
    """Whole tensors of a checkpoint, its row blocks (multi-rank files) put together."""
    ckpt = f"{model_dir}/model.ckpt-{step}"
    tensors = {}
    for path in sorted(glob.glob(f"{ckpt}/model*.safetensors")):
        for name, (value, block) in read_safetensors(path).items():
            if block is None:
                tensors[name] = value
                continue
            full = tensors.setdefault(name, np.zeros(block["global_shape"], dtype=value.dtype))
            full[tuple(slice(o, o + n) for o, n in zip(block["offsets"], value.shape))] = value
    return tensors

def dump_rows(path):
    out = subprocess.run([TZREC, "parquet_cat", path], check=True, capture_output=True, text=True).stdout
    return [json.loads(line) for line in out.splitlines()]

def by_table(rows):
    tables = {}
    for r in rows:
        tables.setdefault(r["table_fqn"], []).append(r)
    return tables

def weight_name(fqn):
    assert fqn.startswith("model."), fqn
    return fqn[len("model."):] + ".weight"

def check_common(rows, step, rank, world):
    for r in rows:
        assert r["global_step"] == step and r["rank"] == rank and r["world_size"] == world, r
        assert r["source"] == "model_delta_tracker", r
    for fqn, rs in by_table(rows).items():
        keys = [r["key_id"] for r in rs]
        assert keys == sorted(set(keys)), f"{fqn}: keys not ascending and distinct"
        assert len({r["feature_name"] for r in rs}) == 1, fqn

def quantize(x):
    """TorchEasyRec's quant_util._quantize_quint8_rowwise_f16, in numpy (float16 rounding)."""
    x = x.astype(np.float32)
    lo = x.min(axis=1, keepdims=True).astype(np.float32)
    hi = x.max(axis=1, keepdims=True).astype(np.float32)
    offset16 = lo.astype(np.float16)
    offset = offset16.astype(np.float32)
    rng = (hi - offset).astype(np.float32)
    scale = np.where(rng != 0, rng / np.float32(255.0), np.float32(1.0)).astype(np.float32)
    scale = scale.astype(np.float16).astype(np.float32)
    scale = np.where(scale == 0, np.float32(1.0), scale).astype(np.float32)
    scale16 = scale.astype(np.float16)
    q = np.clip(np.rint((x - offset) / scale), 0, 255).astype(np.uint8)
    return np.concatenate([q, scale16.view(np.uint8).reshape(-1, 2), offset16.view(np.uint8).reshape(-1, 2)], axis=1)

def plain(model_dir, data, batch, dumps):
    """dumps: [(step, first step of its interval)]: keys = ids read by the interval's batches."""
    rows = [json.loads(line) for line in open(data)]
    for step, first in dumps:
        got = dump_rows(f"{model_dir}/delta_embedding_dump/delta_embedding_step_{step}.parquet")
        check_common(got, step, 0, 1)
        tensors = checkpoint(model_dir, step)
        interval = rows[first * batch:(step + 1) * batch]
        tables = by_table(got)
        assert len(tables) == 52, f"step {step}: {len(tables)} tables"
        for fqn, rs in tables.items():
            feature = rs[0]["feature_name"]
            want = sorted({int(r[feature]) for r in interval if r.get(feature) is not None})
            keys = [r["key_id"] for r in rs]
            assert keys == want, f"step {step} {fqn}: {len(keys)} keys, want {len(want)}"
            weight = tensors[weight_name(fqn)]
            values = np.array([r["embedding"] for r in rs], dtype=np.float32)
            assert np.array_equal(values, weight[keys]), f"step {step} {fqn}: values differ from the checkpoint"
    print("plain OK")

def int8(model_dir, step):
    got = dump_rows(f"{model_dir}/delta_embedding_dump/delta_embedding_step_{step}.parquet")
    check_common(got, step, 0, 1)
    tensors = checkpoint(model_dir, step)
    for fqn, rs in by_table(got).items():
        weight = tensors[weight_name(fqn)]
        keys = [r["key_id"] for r in rs]
        codes = np.array([r["embedding"] for r in rs], dtype=np.int64)
        assert codes.shape[1] == weight.shape[1] + 4, fqn
        assert np.array_equal(codes, quantize(weight[keys]).astype(np.int64)), f"{fqn}: INT8 rows differ"
    print("int8 OK")

def zch(model_dir, steps):
    held_before = {}
    changes = 0
    for step in steps:
        got = dump_rows(f"{model_dir}/delta_embedding_dump/delta_embedding_step_{step}.parquet")
        check_common(got, step, 0, 1)
        tensors = checkpoint(model_dir, step)
        zch_tables = 0
        for fqn, rs in by_table(got).items():
            weight = tensors[weight_name(fqn)]
            keys = np.array([r["key_id"] for r in rs], dtype=np.int64)
            values = np.array([r["embedding"] for r in rs], dtype=np.float32)
            if "._embedding_module." not in fqn:
                assert np.array_equal(values, weight[keys]), fqn
                continue
            zch_tables += 1
            table = fqn.rsplit(".", 1)[1]
            module = weight_name(fqn).split("._embedding_module.")[0] + \
                f"._managed_collision_collection._managed_collision_modules.{table}."
            ids = tensors[module + "_mch_sorted_raw_ids"]
            slots = tensors[module + "_mch_remapped_ids_mapping"]
            empty = np.iinfo(np.int64).max
            held = {int(i): int(s) for i, s in zip(ids, slots) if i != empty}
            rows = [held.get(int(k), weight.shape[0] - 1) for k in keys]
            assert np.array_equal(values, weight[rows]), f"step {step} {fqn}: rows differ from the served ones"
            if fqn in held_before:
                changed = set(held) ^ set(held_before[fqn])
                changes += len(changed)
                missing = changed - set(int(k) for k in keys)
                assert not missing, f"step {step} {fqn}: admitted / evicted ids not dumped: {sorted(missing)[:5]}"
            held_before[fqn] = held
        assert zch_tables > 0, f"step {step}: no zch table dumped"
    assert changes > 0, "no admission or eviction between two dumps: the test checks nothing"
    print(f"zch OK ({changes} ids admitted or evicted between dumps)")

def dynamic(model_dir, step):
    got = dump_rows(f"{model_dir}/delta_embedding_dump/delta_embedding_step_{step}.parquet")
    check_common(got, step, 0, 1)
    tensors = checkpoint(model_dir, step)
    dynamic_tables = 0
    for fqn, rs in by_table(got).items():
        keys = [r["key_id"] for r in rs]
        values = np.array([r["embedding"] for r in rs], dtype=np.float32)
        if weight_name(fqn) in tensors:  # a plain table
            assert np.array_equal(values, tensors[weight_name(fqn)][keys]), fqn
            continue
        # TorchEasyRec names the table in its plain collection; this engine's checkpoint keeps it
        # (and its row_keys / row_live) in dynamicemb_ebc.
        dynamic_tables += 1
        name = weight_name(fqn).replace(".ebc.", ".dynamicemb_ebc._embedding_module.")
        weight = tensors[name]
        state = name.replace("._embedding_module.embedding_bags.", ".dynamic_tables.").rsplit(".weight", 1)[0]
        row_keys, live = tensors[state + ".row_keys"], tensors[state + ".row_live"]
        row_of = {int(k): r for r, (k, l) in enumerate(zip(row_keys, live)) if l}
        assert all(k in row_of for k in keys), f"{fqn}: a key the table does not hold"
        assert np.array_equal(values, weight[[row_of[k] for k in keys]]), f"{fqn}: rows differ"
    assert dynamic_tables > 0, "no dynamic table dumped"
    print("dynamic OK")

def zch_ranks(model_dir, steps, world):
    """Two ranks: each rank's zch keys get the row its own module serves: the held id's row in the
    rank's block of the buffers, else the rank's fallback row (the last row of its block)."""
    for step in steps:
        tensors = checkpoint(model_dir, step)
        blocks = {}
        for path in glob.glob(f"{model_dir}/model.ckpt-{step}/model-*.safetensors"):
            rank = int(path.rsplit("model-", 1)[1].split("-of-")[0])
            for name, (value, block) in read_safetensors(path).items():
                if block is not None:
                    blocks[(name, rank)] = value
        checked = 0
        for rank in range(world):
            got = dump_rows(f"{model_dir}/delta_embedding_dump/step_{step}/"
                            f"delta_embedding_step_{step}_rank_{rank}_of_{world}.parquet")
            check_common(got, step, rank, world)
            for fqn, rs in by_table(got).items():
                if "._embedding_module." not in fqn:
                    continue
                name = weight_name(fqn)
                table = fqn.rsplit(".", 1)[1]
                module = name.split("._embedding_module.")[0] + \
                    f"._managed_collision_collection._managed_collision_modules.{table}."
                ids, slots = blocks[(module + "_mch_sorted_raw_ids", rank)], blocks[(module + "_mch_remapped_ids_mapping", rank)]
                held = {int(i): int(s) for i, s in zip(ids, slots) if i != np.iinfo(np.int64).max}
                # The rank's block of the weight: rows [start, start + len); its fallback is the last.
                start = sum(blocks[(name, q)].shape[0] for q in range(rank))
                fallback = start + blocks[(name, rank)].shape[0] - 1
                keys = [r["key_id"] for r in rs]
                values = np.array([r["embedding"] for r in rs], dtype=np.float32)
                rows = [held.get(k, fallback) for k in keys]
                assert all(start <= x <= fallback for x in rows), f"{fqn}: rank {rank} serves rows of another block"
                assert np.array_equal(values, tensors[name][rows]), f"step {step} {fqn} rank {rank}: rows differ"
                checked += len(keys)
        assert checked > 0, f"step {step}: no zch row dumped"
    print("zch ranks OK")

def sharded(model_dir, steps, world):
    for step in steps:
        files = sorted(glob.glob(f"{model_dir}/delta_embedding_dump/step_{step}/*.parquet"))
        want = [f"{model_dir}/delta_embedding_dump/step_{step}/delta_embedding_step_{step}_rank_{r}_of_{world}.parquet"
                for r in range(world)]
        assert files == want, f"step {step}: {files}"
        tensors = checkpoint(model_dir, step)
        blocks = {}
        for path in glob.glob(f"{model_dir}/model.ckpt-{step}/model-*.safetensors"):
            for name, (value, block) in read_safetensors(path).items():
                if block is not None:
                    rank = int(path.rsplit("model-", 1)[1].split("-of-")[0])
                    blocks[(name, rank)] = (block["offsets"][0], block["offsets"][0] + value.shape[0])
        owners = {}
        for rank, path in enumerate(files):
            got = dump_rows(path)
            check_common(got, step, rank, world)
            for fqn, rs in by_table(got).items():
                name = weight_name(fqn)
                keys = [r["key_id"] for r in rs]
                lo, hi = blocks[(name, rank)]
                assert all(lo <= k < hi for k in keys), f"{fqn}: rank {rank} dumped rows outside its block"
                values = np.array([r["embedding"] for r in rs], dtype=np.float32)
                assert np.array_equal(values, tensors[name][keys]), f"step {step} {fqn}: values differ"
                for k in keys:
                    assert (fqn, k) not in owners, f"{fqn} row {k} dumped by two ranks"
                    owners[(fqn, k)] = rank
        assert owners, f"step {step}: nothing dumped"
    print("sharded OK")

globals()[sys.argv[1]](*[json.loads(a) for a in sys.argv[2:]])
PY
export TZREC

# 1. Plain tables, one process: batches of 1024 rows in file order (one loader worker).
"$TZREC" gen_data --output_dir "$WORK/data" --num_rows 12000 --num_eval_rows 1000 --seed 7 --format parquet \
  2> "$WORK/gen.log" || { cat "$WORK/gen.log"; fail "gen_data"; }
"$TZREC" parquet_cat "$WORK/data/train.parquet" > "$WORK/train.jsonl" || fail "parquet_cat of the data"
sed 's/^  num_epochs: 1$/  num_steps: 8\n  delta_embedding_dump_config { dump_interval_steps: 3 }/' \
  "$ROOT/examples/deepfm_criteo_synth.config" > "$WORK/deepfm.config"
grep -q delta_embedding_dump_config "$WORK/deepfm.config" || fail "config edit"
EDIT='{"train_input_path":"'$WORK'/data/train.parquet","eval_input_path":"'$WORK'/data/eval.parquet",'\
'"train_config.save_checkpoints_steps":3,"data_config.num_workers":1,"data_config.batch_size":1024}'
"$TZREC" train_eval --pipeline_config_path "$WORK/deepfm.config" --model_dir "$WORK/plain" --edit_config_json "$EDIT" \
  2> "$WORK/plain.log" || { tail -20 "$WORK/plain.log"; fail "train_eval with a delta embedding dump"; }
ls "$WORK/plain/delta_embedding_dump" > "$WORK/files"
[[ "$(cat "$WORK/files" | tr '\n' ' ')" == "delta_embedding_step_3.parquet delta_embedding_step_6.parquet delta_embedding_step_7.parquet " ]] \
  || { cat "$WORK/files"; fail "dump files"; }
$PY "$WORK/check.py" plain "\"$WORK/plain\"" "\"$WORK/train.jsonl\"" 1024 '[[3, 0], [6, 4], [7, 7]]' || fail "plain tables"

# 2. INT8 rows.
sed 's/dump_interval_steps: 3 }/dump_interval_steps: 3 quant_type: DELTA_EMBEDDING_QUANT_INT8 }/; s/num_steps: 8/num_steps: 4/' \
  "$WORK/deepfm.config" > "$WORK/int8.config"
"$TZREC" train_eval --pipeline_config_path "$WORK/int8.config" --model_dir "$WORK/int8" --edit_config_json "$EDIT" \
  2> "$WORK/int8.log" || { tail -20 "$WORK/int8.log"; fail "train_eval with INT8 dumps"; }
$PY "$WORK/check.py" int8 "\"$WORK/int8\"" 3 || fail "INT8 rows"

# 3. and 4.: a config of tests/configs/gen_data trained <steps> steps with dumps every 4 steps.
train_gen_data_config() {  # <name> <config> <steps>
  "$TZREC" gen_data --pipeline_config_path "$ROOT/tests/configs/gen_data/$2.config" --output_dir "$WORK/$1_data" \
    --num_rows 3000 2> "$WORK/gen.log" || { cat "$WORK/gen.log"; fail "gen_data $2"; }
  sed "s/^  num_epochs: 1$/  num_steps: $3\n  delta_embedding_dump_config { dump_interval_steps: 4 }/" \
    "$ROOT/tests/configs/gen_data/$2.config" > "$WORK/$1.config"
  local edit='{"train_input_path":"'$WORK'/'$1'_data/train.parquet","eval_input_path":"","train_config.save_checkpoints_steps":4}'
  "$TZREC" train_eval --pipeline_config_path "$WORK/$1.config" --model_dir "$WORK/$1" --edit_config_json "$edit" \
    2> "$WORK/$1.log" || { tail -20 "$WORK/$1.log"; fail "train_eval $2"; }
}
# 3. Zero-collision hashed tables (evictions every 2-3 steps).
train_gen_data_config zch zch 13
$PY "$WORK/check.py" zch "\"$WORK/zch\"" '[4, 8, 12]' || fail "zch tables"
# 4. Dynamic tables.
train_gen_data_config dyn dynamicemb 9
$PY "$WORK/check.py" dynamic "\"$WORK/dyn\"" 8 || fail "dynamic tables"

# 5. Two ranks, row_wise tables: dumps at 3 and the final one at 4.
sed 's/dump_interval_steps: 3 }/dump_interval_steps: 3 }\n  global_embedding_constraints { sharding_types: "row_wise" }/; s/num_steps: 8/num_steps: 5/' \
  "$WORK/deepfm.config" > "$WORK/rowwise.config"
REDIT='{"train_input_path":"'$WORK'/data/train.parquet","eval_input_path":"","train_config.save_checkpoints_steps":3,'\
'"data_config.num_workers":1,"data_config.batch_size":512}'
timeout 600 "$TZREC" launch --nproc-per-node 2 -- train_eval --pipeline_config_path "$WORK/rowwise.config" \
  --model_dir "$WORK/ranks" --edit_config_json "$REDIT" > "$WORK/ranks.log" 2>&1 \
  || { tail -20 "$WORK/ranks.log"; fail "two-rank train_eval"; }
$PY "$WORK/check.py" sharded "\"$WORK/ranks\"" '[3, 4]' 2 || fail "two-rank dumps"

# 5b. Two ranks, zero-collision hashed tables (sharded row_wise, each rank's module on its block).
timeout 600 "$TZREC" launch --nproc-per-node 2 -- train_eval --pipeline_config_path "$WORK/zch.config" \
  --model_dir "$WORK/zch_ranks" \
  --edit_config_json '{"train_input_path":"'$WORK'/zch_data/train.parquet","eval_input_path":"","train_config.save_checkpoints_steps":4}' \
  > "$WORK/zch_ranks.log" 2>&1 \
  || { tail -20 "$WORK/zch_ranks.log"; fail "two-rank zch train_eval"; }
$PY "$WORK/check.py" zch_ranks "\"$WORK/zch_ranks\"" '[4, 8, 12]' 2 || fail "two-rank zch dumps"

# 6. Config errors (check_config, as train_eval).
bad() {  # <name> <config edit (sed)> <expected path> <expected words>
  sed "$2" "$WORK/deepfm.config" > "$WORK/$1.config"
  "$TZREC" check_config --pipeline_config_path "$WORK/$1.config" > "$WORK/$1.out" 2>&1 && fail "$1 accepted"
  grep -q "$3.*$4" "$WORK/$1.out" || { cat "$WORK/$1.out"; fail "$1: no error naming $3"; }
}
bad both_intervals 's/dump_interval_steps: 3 }/dump_interval_steps: 3 dump_interval_minutes: 5 }/' \
  "train_config.delta_embedding_dump_config" "only one of dump_interval_steps and dump_interval_minutes"
bad zero_steps 's/dump_interval_steps: 3 }/dump_interval_steps: 0 }/' \
  "train_config.delta_embedding_dump_config.dump_interval_steps" "must be > 0"
bad zero_minutes 's/dump_interval_steps: 3 }/dump_interval_minutes: 0 }/' \
  "train_config.delta_embedding_dump_config.dump_interval_minutes" "must be > 0"
bad odd_dim 's/dump_interval_steps: 3 }/dump_interval_steps: 3 quant_type: DELTA_EMBEDDING_QUANT_INT8 }/; s/embedding_dim: 16/embedding_dim: 15/' \
  "train_config.delta_embedding_dump_config.quant_type" "embedding table 'cat_0_emb' has embedding_dim 15"
bad feature_store 's/dump_interval_steps: 3 }/dump_interval_steps: 3 feature_store_config { region: "r" project_name: "p" feature_view_name: "v" } }/' \
  "not supported yet" "train_config.delta_embedding_dump_config.feature_store_config"
echo OK
