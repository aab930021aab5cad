#!/usr/bin/env bash
# `tzrec predict --debug_level 1` (the __features__ column) and `tzrec create_online_infer_data` on a
# MultiTowerDIN config under FG_NORMAL with CSV data written here. The expected parsed features
# are computed in Python from the CSV cells by TorchEasyRec's DataParser.dump_parsed_inputs rules
# (tzrec/datasets/data_parser.py): ids in decimal (num_buckets: the id is the value), float32
# values as numpy's astype(str), weighted ids as sorted "id:weight", sequence items joined by the
# sequence_delim, features joined by " | ".
#   - predict --debug_level 1 with CsvWriter: every row's __features__ equals the expected line,
#     after the reserved column; --debug_level 0 writes no such column;
#   - create_online_infer_data --item_id iid --batch_size 6: data.json holds the first 6 rows, the
#     user-side columns (uid, vec, the click sequence) as the first row's one value, "item_ids"
#     after "iid", MaxCompute dtypes; fgout.json holds per item id the expected features of a row
#     whose user columns are the first row's; result.json's probs equal a predict of the same
#     request; --batch_size 2 without --item_id and an FG_NONE export are refused.
set -euo pipefail
TZREC=$1
ROOT=$2
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT
fail() { echo "FAIL: $*"; exit 1; }
PY=/usr/bin/python3
cd "$WORK"

$PY - <<'PY'
import random
random.seed(7)
rows = []
for r in range(200):
    uid = random.randrange(50)
    iid = 100 + r  # distinct item ids, the keys of fgout.json
    tags = "\x1d".join(f"{random.randrange(20)}:{random.choice(['0.5', '1.25', '0.1', '2', '0.0001'])}"
                       for _ in range(random.randrange(1, 4)))
    price = random.choice(["0.1", "12.375", "123456789", "1e-5", "-2.5", "7"])
    vec = f"{random.randrange(10)}.5\x1d{random.choice(['0.3', '1e16', '-4'])}"
    n = random.randrange(0, 5)
    click_iid = ";".join(str(random.randrange(1000)) for _ in range(n))
    click_ts = ";".join(random.choice(["0.25", "3", "0.1"]) for _ in range(n))
    clk = random.randrange(2)
    rows.append([str(uid), str(iid), tags, price, vec, click_iid, click_ts, str(clk)])
with open("train.csv", "w") as f:
    f.write("uid,iid,tags,price,vec,click__iid,click__ts,clk\n")
    for row in rows:
        f.write(",".join(row) + "\n")
PY

cat > pipeline.config <<'CFG'
train_input_path: "train.csv"
eval_input_path: "train.csv"
model_dir: "model"
train_config {
  sparse_optimizer { adagrad_optimizer { lr: 0.01 } constant_learning_rate {} }
  dense_optimizer { adam_optimizer { lr: 0.001 } constant_learning_rate {} }
  num_steps: 5
}
eval_config {}
data_config {
  batch_size: 32
  dataset_type: CsvDataset
  with_header: true
  fg_mode: FG_NORMAL
  label_fields: "clk"
  num_workers: 2
}
feature_configs { id_feature { feature_name: "user" expression: "user:uid" num_buckets: 1000 embedding_dim: 8 } }
feature_configs { id_feature { feature_name: "item" expression: "item:iid" num_buckets: 1000 embedding_dim: 8 } }
feature_configs { id_feature { feature_name: "tag" expression: "item:tags" num_buckets: 100 embedding_dim: 8 weighted: true } }
feature_configs { raw_feature { feature_name: "price" expression: "item:price" } }
feature_configs { raw_feature { feature_name: "vec" expression: "user:vec" value_dim: 2 } }
feature_configs { sequence_feature {
  sequence_name: "click" sequence_length: 50 sequence_delim: ";"
  features { id_feature { feature_name: "iid" expression: "item:iid" num_buckets: 1000 embedding_dim: 8 } }
  features { raw_feature { feature_name: "ts" expression: "item:ts" } }
} }
model_config {
  feature_groups { group_name: "deep" feature_names: "user" feature_names: "item" feature_names: "tag"
                   feature_names: "price" feature_names: "vec" group_type: DEEP }
  feature_groups { group_name: "seq" feature_names: "item" feature_names: "click__iid" group_type: SEQUENCE }
  multi_tower_din {
    towers { input: "deep" mlp { hidden_units: [16] } }
    din_towers { input: "seq" attn_mlp { hidden_units: [8] } }
    final { hidden_units: [8] }
  }
  metrics { auc {} }
  losses { binary_cross_entropy {} }
}
CFG

"$TZREC" train_eval --pipeline_config_path pipeline.config > train.log 2>&1 || { tail -5 train.log; fail "train_eval"; }
"$TZREC" export --pipeline_config_path model/pipeline.config --export_dir export > export.log 2>&1 \
  || { tail -5 export.log; fail "export"; }

# The expected __features__ line of a CSV row (a dict of its cells).
cat > expected.py <<'PY'
import numpy as np

def f32(s):
    return np.array([float(s)], dtype=np.float32).astype(str)[0]

def features_line(c):
    tags = sorted(f"{int(k)}:{f32(w)}" for k, w in (p.split(":") for p in c["tags"].split("\x1d")))
    items = c["click__iid"].split(";") if c["click__iid"] else []
    ts = c["click__ts"].split(";") if c["click__ts"] else []
    # An empty history is one item of the default value "0" under feature generation.
    if not items:
        items, ts = ["0"], ["0"]
    parts = [
        ("user", str(int(c["uid"]))),
        ("item", str(int(c["iid"]))),
        ("tag", ",".join(tags)),
        ("price", f32(c["price"])),
        ("vec", ",".join(f32(v) for v in c["vec"].split("\x1d"))),
        ("click__iid", ";".join(str(int(i)) for i in items)),
        ("click__ts", ";".join(f32(t) for t in ts)),
    ]
    return " | ".join(f"{k}:{v}" for k, v in parts)
PY

# ---- predict --debug_level 1 -----------------------------------------------------------------------
"$TZREC" predict --scripted_model_path export --predict_input_path train.csv --predict_output_path pred \
  --reserved_columns iid --writer_type CsvWriter --debug_level 1 > predict.log 2>&1 \
  || { tail -5 predict.log; fail "predict --debug_level 1"; }
$PY - <<'PY' || fail "predict --debug_level 1: __features__ differs from the expected lines"
import csv, sys
sys.path.insert(0, ".")
from expected import features_line
rows = {r["iid"]: r for r in csv.DictReader(open("train.csv", newline=""))}
out = list(csv.DictReader(open("pred/part-0.csv", newline="")))
assert len(out) == 200, len(out)
assert list(out[0].keys())[-2:] == ["iid", "__features__"], list(out[0].keys())
bad = [(o["__features__"], features_line(rows[o["iid"]])) for o in out if o["__features__"] != features_line(rows[o["iid"]])]
assert not bad, bad[:3]
PY
"$TZREC" predict --scripted_model_path export --predict_input_path train.csv --predict_output_path pred0 \
  --writer_type CsvWriter > predict0.log 2>&1 || { tail -5 predict0.log; fail "predict"; }
grep -q "__features__" <<< "$(head -1 pred0/part-0.csv)" && fail "predict without --debug_level wrote __features__"
"$TZREC" predict --scripted_model_path export --predict_input_path train.csv --predict_output_path pred1 \
  --debug_level -1 > bad.log 2>&1 && fail "--debug_level -1 accepted"
grep -q "^error: --debug_level -1 must be 0 or more" bad.log || { cat bad.log; fail "--debug_level -1: message"; }

# ---- create_online_infer_data ----------------------------------------------------------------------
"$TZREC" create_online_infer_data --scripted_model_path export --item_id iid --batch_size 6 > oid.log 2>&1 \
  || { tail -5 oid.log; fail "create_online_infer_data"; }
for f in debug_data/data.json debug_data/part-0.parquet debug_result/part-0.parquet debug_result/fgout.json \
         debug_result/result.json; do
  [[ -s "export/$f" ]] || fail "create_online_infer_data: no export/$f"
done
# The request predicted again, by predict itself: the same probabilities as result.json.
"$TZREC" predict --scripted_model_path export --predict_input_path export/debug_data/part-0.parquet \
  --predict_output_path pred_req --writer_type CsvWriter --reserved_columns iid --dataset_type ParquetDataset \
  > pred_req.log 2>&1 || { tail -5 pred_req.log; fail "predict of the request"; }
$PY - <<'PY' || fail "create_online_infer_data: outputs differ from the expected ones"
import csv, json, sys
sys.path.insert(0, ".")
from expected import features_line
rows = list(csv.DictReader(open("train.csv", newline="")))[:6]
data = json.load(open("export/debug_data/data.json"))
assert list(data) == ["uid", "iid", "item_ids", "tags", "price", "vec", "click__iid", "click__ts", "clk"], list(data)
# CSV columns typed as pyarrow's read_csv infers them from the rows read: BIGINT when every non-null
# cell is an integer, else DOUBLE when every one is a number, else STRING (cells as they are).
NULLS = {"", "#N/A", "#N/A N/A", "#NA", "-1.#IND", "-1.#QNAN", "-NaN", "-nan", "1.#IND", "1.#QNAN", "N/A",
         "NA", "NULL", "NaN", "n/a", "nan", "null"}
def is_int(c):
    try:
        int(c)
        return True
    except ValueError:
        return False
def is_float(c):
    try:
        float(c)
        return True
    except ValueError:
        return False
def typed(col):
    cells = [r[col] for r in rows]
    present = [c for c in cells if c not in NULLS]
    if all(is_int(c) for c in present):
        return "BIGINT", [None if c in NULLS else int(c) for c in cells]
    if all(is_float(c) for c in present):
        return "DOUBLE", [None if c in NULLS else float(c) for c in cells]
    return "STRING", cells
for col in ["uid", "iid", "tags", "price", "vec", "click__iid", "click__ts", "clk"]:
    dtype, values = typed(col)
    assert data[col]["dtype"] == dtype, (col, data[col]["dtype"], dtype)
    # User-side columns hold the first row's value once.
    want = values[:1] if col in ["uid", "vec", "click__iid", "click__ts"] else values
    assert data[col]["values"] == want, (col, data[col]["values"], want)
assert data["uid"]["dtype"] == "BIGINT" and data["price"]["dtype"] == "DOUBLE" and data["tags"]["dtype"] == "STRING"
assert data["item_ids"] == data["iid"]
fgout = json.load(open("export/debug_result/fgout.json"))
assert list(fgout) == [r["iid"] for r in rows], list(fgout)
for r in rows:
    request_row = dict(r)
    for col in ["uid", "vec", "click__iid", "click__ts"]:
        request_row[col] = rows[0][col]
    want = dict(p.split(":", 1) for p in features_line(request_row).split(" | "))
    assert fgout[r["iid"]] == want, (r["iid"], fgout[r["iid"]], want)
result = json.load(open("export/debug_result/result.json"))
assert sorted(result) == ["logits", "probs"], list(result)
pred = {o["iid"]: float(o["probs"]) for o in csv.DictReader(open("pred_req/part-0.csv", newline=""))}
assert len(result["probs"]) == 6
for r, p in zip(rows, result["probs"]):
    assert abs(pred[r["iid"]] - p) < 1e-6, (r["iid"], pred[r["iid"]], p)
PY

# ---- refused -----------------------------------------------------------------------------------------
"$TZREC" create_online_infer_data --scripted_model_path export --batch_size 2 > bad.log 2>&1 \
  && fail "--batch_size 2 without --item_id accepted"
grep -q "^error: --batch_size 2 without --item_id" bad.log || { cat bad.log; fail "--batch_size without --item_id: message"; }
"$TZREC" create_online_infer_data --scripted_model_path export --item_id no_such > bad.log 2>&1 \
  && fail "an unknown --item_id accepted"
grep -q "^error: --item_id no_such: no such column in" bad.log || { cat bad.log; fail "--item_id: message"; }
sed 's/fg_mode: FG_NORMAL/fg_mode: FG_NONE/' export/pipeline.config > none.config
mkdir -p export_none && cp export/model.safetensors export/model_acc.json export_none/ && cp none.config export_none/pipeline.config
"$TZREC" create_online_infer_data --scripted_model_path export_none --item_id iid > bad.log 2>&1 \
  && fail "an FG_NONE export accepted"
grep -q "^error: data_config.fg_mode: FG_NONE; create_online_infer_data" bad.log || { cat bad.log; fail "FG_NONE: message"; }
echo "online infer data: OK"
