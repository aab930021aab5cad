#!/usr/bin/env bash
# Checkpoint policies end to end: keep_checkpoint_max (+ the best checkpoint with
# exporter_type "best"), list_checkpoint_params (and list_distcp_param), and fine_tune_checkpoint with a
# fine_tune_ckpt_param_map and a parameter missing from the checkpoint.
# Usage: checkpoint_policies_test.sh <tzrec binary> <repo root>
set -euo pipefail
TZREC=$1
ROOT=$2
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT
CONFIG=$WORK/deepfm_steps.config
sed 's/num_epochs: 1/num_steps: 60/' "$ROOT/examples/deepfm_criteo_synth.config" > "$CONFIG"
CMP=$ROOT/tests/tools/compare_safetensors.py
fail() { echo "FAIL: $*"; exit 1; }
steps_in() { ls -d "$1"/model.ckpt-* 2> /dev/null | sed 's/.*model.ckpt-//' | sort -n | tr '\n' ' '; }

"$TZREC" gen_data --output_dir "$WORK/data" --num_rows 8000 --num_eval_rows 1000 --seed 5 --format parquet 2> /dev/null
common='"train_input_path":"'$WORK'/data/train.parquet","eval_input_path":"'$WORK'/data/eval.parquet","data_config.batch_size":128,"train_config.save_checkpoints_steps":10'
run() {  # run <model_dir> <extra json> [extra flags]
  local dir=$1 extra=$2; shift 2
  OMP_NUM_THREADS=1 "$TZREC" train_eval --pipeline_config_path "$CONFIG" --model_dir "$dir" \
    --edit_config_json "{$common$extra}" "$@" 2> "$dir.log" || { cat "$dir.log"; fail "train_eval $dir"; }
}

# 1. keep_checkpoint_max: 2 → saves at 10 20 30 40 50 59, only 50 59 stay.
run "$WORK/keep" ',"train_config.keep_checkpoint_max":2'
[[ "$(steps_in "$WORK/keep")" == "50 59 " ]] || fail "keep_checkpoint_max 2 left: $(steps_in "$WORK/keep")"
[[ $(wc -l < "$WORK/keep/train_eval_result_v2.txt") -eq 6 ]] || fail "expected 6 evaluations"

# 2. + exporter_type best: the newest 2 plus the best-auc checkpoint (first on ties), computed here
# independently from train_eval_result_v2.txt.
run "$WORK/best" ',"train_config.keep_checkpoint_max":2,"export_config.exporter_type":"best"'
expected=$(/usr/bin/python3 - "$WORK/best/train_eval_result_v2.txt" <<'PY'
import json, sys
rows = [json.loads(l) for l in open(sys.argv[1]) if l.strip()]
best = max(rows, key=lambda r: (r["auc"], -r["global_step"]))["global_step"]
print(" ".join(str(s) for s in sorted({50, 59, best})) + " ")
PY
)
[[ "$(steps_in "$WORK/best")" == "$expected" ]] || fail "best: left $(steps_in "$WORK/best"), expected $expected"

# 3. list_checkpoint_params on a model_dir lists its latest checkpoint's tensors, as the manifest.
"$TZREC" list_checkpoint_params --checkpoint_path "$WORK/keep" > "$WORK/params.txt" 2> /dev/null
"$TZREC" list_checkpoint_params --checkpoint_path "$WORK/keep/model.ckpt-59" --optimizer > "$WORK/all.txt" 2> /dev/null
# TorchEasyRec's name of the tool lists the model's and the optimizer's tensors.
"$TZREC" list_distcp_param --checkpoint_path "$WORK/keep/model.ckpt-59" > "$WORK/distcp.txt" 2> /dev/null
cmp -s "$WORK/all.txt" "$WORK/distcp.txt" || fail "list_distcp_param differs from list_checkpoint_params --optimizer"
/usr/bin/python3 - "$WORK/keep/model.ckpt-59/manifest.json" "$WORK/params.txt" "$WORK/all.txt" <<'PY' || fail "list_checkpoint_params output"
import json, sys
m = json.load(open(sys.argv[1]))
dt = {"F32": "float32", "F64": "float64", "F16": "float16", "BF16": "bfloat16", "I64": "int64",
      "I32": "int32", "I16": "int16", "I8": "int8", "U8": "uint8", "BOOL": "bool"}
def lines(entries):
    return sorted("{} [{}] {}".format(e["name"], ", ".join(map(str, e["shape"])), dt.get(e["dtype"], e["dtype"]))
                  for e in entries)
got = sorted(open(sys.argv[2]).read().split("\n")[:-1])
want = lines(m["parameters"])
assert got == want, (got[:3], want[:3])
got_all = sorted(open(sys.argv[3]).read().split("\n")[:-1])
assert got_all == sorted(want + lines(m["optimizer_state"])), "with --optimizer"
assert any(l.startswith("dense.") for l in got_all) and len(want) > 3
PY
if "$TZREC" list_checkpoint_params --checkpoint_path "$WORK/nowhere" > /dev/null 2> "$WORK/err.txt"; then
  fail "list_checkpoint_params on an empty dir succeeded"
fi
grep -q "no checkpoint found in $WORK/nowhere" "$WORK/err.txt" || fail "error text: $(cat "$WORK/err.txt")"

# 4. fine_tune_checkpoint with a param map. The source checkpoint gets one tensor renamed
# (legacy.<name>) and one removed; with learning rates 0 the fine-tuned model after one step must
# equal the source exactly except the removed tensor (kept as initialised).
SRC=$WORK/src/model.ckpt-7
mkdir -p "$SRC"
/usr/bin/python3 - "$WORK/keep/model.ckpt-59" "$SRC" > "$WORK/names.txt" <<'PY'
import json, struct, sys, shutil
src, dst = sys.argv[1], sys.argv[2]
blob = open(src + "/model.safetensors", "rb").read()
(n,) = struct.unpack("<Q", blob[:8]); header = json.loads(blob[8:8 + n]); data = blob[8 + n:]
names = sorted(k for k, v in header.items() if k != "__metadata__" and len(v["shape"]) == 2 and "mlp" in k)
renamed, dropped = names[0], names[1]
out, pieces, off = {}, [], 0
for k, v in sorted(header.items(), key=lambda kv: kv[1].get("data_offsets", [0])[0] if kv[0] != "__metadata__" else -1):
    if k == "__metadata__": out[k] = v; continue
    if k == dropped: continue
    b, e = v["data_offsets"]; pieces.append(data[b:e])
    out["legacy." + k if k == renamed else k] = dict(v, data_offsets=[off, off + e - b]); off += e - b
h = json.dumps(out).encode(); h += b" " * (-len(h) % 8)
open(dst + "/model.safetensors", "wb").write(struct.pack("<Q", len(h)) + h + b"".join(pieces))
m = json.load(open(src + "/manifest.json"))
m["parameters"] = [dict(p, name="legacy." + p["name"]) if p["name"] == renamed else p
                   for p in m["parameters"] if p["name"] != dropped]
m["step"] = 7
json.dump(m, open(dst + "/manifest.json", "w"))
for f in ["optimizer.safetensors", "dataloader_state.json"]: shutil.copy(src + "/" + f, dst + "/" + f)
print(renamed, dropped)
PY
read -r RENAMED DROPPED < "$WORK/names.txt"
printf '# current checkpoint\n\n%s legacy.%s\n' "$RENAMED" "$RENAMED" > "$WORK/param_map.txt"
zero_lr=',"train_config.num_steps":1,"train_config.dense_optimizer.adam_optimizer.lr":0,"train_config.sparse_optimizer.adagrad_optimizer.lr":0'
run "$WORK/ft" "$zero_lr"',"train_config.fine_tune_ckpt_param_map":"'$WORK/param_map.txt'"' \
  --fine_tune_checkpoint "$WORK/src"
log=$WORK/ft.log
grep -q "fine_tune_checkpoint: loaded .* model tensors from $SRC" "$log" || { cat "$log"; fail "no fine-tune load"; }
grep -q "1 model tensor(s) not in $SRC, kept as initialised: $DROPPED\$" "$log" || { cat "$log"; fail "missing warning"; }
grep -q "remapped by fine_tune_ckpt_param_map" "$log" || { cat "$log"; fail "no optimizer-skip warning"; }
[[ "$(steps_in "$WORK/ft")" == "0 " ]] || fail "fine-tune must start at step 0: $(steps_in "$WORK/ft")"
/usr/bin/python3 - "$ROOT/tests/tools" "$WORK/keep/model.ckpt-59/model.safetensors" \
  "$WORK/ft/model.ckpt-0/model.safetensors" "$RENAMED" "$DROPPED" <<'PY' || fail "fine-tuned weights"
import sys
sys.path.insert(0, sys.argv[1])
import numpy as np
from compare_safetensors import read
src, ft, renamed, dropped = read(sys.argv[2]), read(sys.argv[3]), sys.argv[4], sys.argv[5]
assert set(src) == set(ft)
for k in src:
    same = np.array_equal(src[k], ft[k])
    assert same == (k != dropped), (k, same)
assert np.array_equal(src[renamed], ft[renamed])
PY

# 5. --continue_train wins over fine_tune_checkpoint.
run "$WORK/ft" "$zero_lr" --fine_tune_checkpoint "$WORK/src" --continue_train
grep -q "fine_tune_checkpoint $WORK/src ignored: continuing from" "$WORK/ft.log" || { cat "$WORK/ft.log"; fail "continue_train"; }
echo OK
