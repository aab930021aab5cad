#!/usr/bin/env bash
# tzrec create_faiss_index (TorchEasyRec's tools/create_faiss_index, docs/tzrec-compatibility.md
# §3.5), read back with Debian's python3-faiss (faiss.read_index) as the serving side reads it:
#  1. IVFFlatIP with 20 lists over 3000 items of dim 16: the index holds every item, inner product,
#     20 lists; searched with nprobe = 20 (every list) its top 10 of 50 queries are numpy's exact
#     top 10, and id_mapping line i is the id of the table's row i;
#  2. HNSWFlatL2 (M 16, efConstruction 100): every item, L2; with efSearch 256 its top 10 recall
#     at least 98% of numpy's exact top 10;
#  3. an --ivf_nlist above the number of items and an unknown --index_type are one-line errors;
#     --odps_data_quota_name (TorchEasyRec's MaxCompute quota) is accepted with a warning.
# Usage: create_faiss_index_test.sh <tzrec binary> <repo root>
set -euo pipefail
TZREC=$1
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT
cd "$WORK"
export OMP_NUM_THREADS=2
fail() { echo "FAIL: $*"; exit 1; }
PY=/usr/bin/python3

$PY - <<'PY'
import numpy as np
rng = np.random.default_rng(3)
items = rng.standard_normal((3000, 16)).astype(np.float32)
with open("items.csv", "w") as f:
    f.write("item_id,item_tower_emb\n")
    for i, v in enumerate(items):
        f.write('item_%d,"%s"\n' % (i * 7, ",".join(repr(float(x)) for x in v)))
np.save("queries.npy", rng.standard_normal((50, 16)).astype(np.float32))
PY

cat > check.py <<'PY'
import sys
import faiss
import numpy as np
kind, out = sys.argv[1], sys.argv[2]
items = []
ids = []
for line in open("items.csv").read().splitlines()[1:]:
    i, v = line.split(",", 1)
    ids.append(i)
    items.append([float(x) for x in v.strip('"').split(",")])
items = np.array(items, dtype=np.float32)
queries = np.load("queries.npy")
index = faiss.read_index(out + "/faiss_index")
mapping = open(out + "/id_mapping").read().splitlines()
assert mapping == ids, "id_mapping is not the table's ids in order"
assert index.ntotal == len(items) and index.d == 16, (index.ntotal, index.d)
if kind == "ivf_ip":
    ivf = faiss.extract_index_ivf(index)
    assert index.metric_type == faiss.METRIC_INNER_PRODUCT and ivf.nlist == 20, (index.metric_type, ivf.nlist)
    ivf.nprobe = 20
    _, got = index.search(queries, 10)
    exact = np.argsort(-(queries @ items.T), axis=1, kind="stable")[:, :10]
    assert (got == exact).all(), "IVFFlat with every list probed differs from the exact top 10"
    print("IVFFlatIP: exact top 10 of every query with nprobe = nlist")
else:
    assert isinstance(index, faiss.IndexHNSWFlat) and index.metric_type == faiss.METRIC_L2, type(index)
    index.hnsw.efSearch = 256
    _, got = index.search(queries, 10)
    d = ((queries[:, None, :] - items[None, :, :]) ** 2).sum(-1)
    exact = np.argsort(d, axis=1, kind="stable")[:, :10]
    recall = np.mean([len(set(g) & set(e)) / 10 for g, e in zip(got, exact)])
    assert recall >= 0.98, recall
    print(f"HNSWFlatL2: recall@10 {recall:.3f} against the exact top 10")
PY

"$TZREC" create_faiss_index --embedding_input_path items.csv --index_output_dir ivf --id_field item_id \
  --embedding_field item_tower_emb --ivf_nlist 20 --odps_data_quota_name pay-as-you-go 2> ivf.log \
  || { cat ivf.log; fail "IVFFlatIP"; }
grep -q "WARNING.*--odps_data_quota_name is accepted and ignored: MaxCompute only" ivf.log \
  || { cat ivf.log; fail "--odps_data_quota_name: no warning"; }
$PY check.py ivf_ip ivf || fail "IVFFlatIP index"
"$TZREC" create_faiss_index --embedding_input_path items.csv --index_output_dir hnsw --id_field item_id \
  --embedding_field item_tower_emb --index_type HNSWFlatL2 --hnsw_M 16 --hnsw_efConstruction 100 2> hnsw.log \
  || { cat hnsw.log; fail "HNSWFlatL2"; }
$PY check.py hnsw_l2 hnsw || fail "HNSWFlatL2 index"

status=0
"$TZREC" create_faiss_index --embedding_input_path items.csv --index_output_dir big --id_field item_id \
  --embedding_field item_tower_emb --ivf_nlist 5000 > big.log 2>&1 || status=$?
[[ $status != 0 ]] && grep -q "^error: --ivf_nlist 5000 is more than the 3000 embeddings of items.csv" <<< "$(tail -1 big.log)" \
  && [[ $(grep -c "^error" big.log) == 1 ]] || { cat big.log; fail "--ivf_nlist above the items"; }
status=0
"$TZREC" create_faiss_index --embedding_input_path items.csv --index_output_dir x --id_field item_id \
  --embedding_field item_tower_emb --index_type IVFPQ > type.log 2>&1 || status=$?
[[ $status == 2 && $(wc -l < type.log) == 1 ]] && grep -q "^error: --index_type IVFPQ: use IVFFlatIP" type.log \
  || { cat type.log; fail "unknown --index_type"; }
echo OK
