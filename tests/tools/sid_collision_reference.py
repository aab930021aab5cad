#!/usr/bin/env python3
"""Reference of SID collision resolution for src/retrieval/sid_collision_test.cc, produced by
TorchEasyRec's own collision core (tzrec/utils/sid/collision.py).

The script imports that one file from a TorchEasyRec checkout (nothing of it is copied here or
shared with the engine; its logging import gets a minimal stand-in) and needs NumPy and, for the
string ids, pandas (Debian 12's python3-numpy 1.24 and python3-pandas 1.5.3). It writes
items.csv — 80 items over codebook 3,4,5 with their codes concentrated on a few buckets, an
integer id (one repeated), a string id and three candidates' flat codes — and expected.json: for
integer and string ids and both strategies (the items' own candidates, keyed by item id as the
tool loads them; random with 4 draws), capacity 2, each row's resolved last code and slot and the
statistics, plus the first order hashes; and the same for the last 30 integer-id items appended
onto the first 50 resolved (append_int_candidate).

Run: /usr/bin/python3 tests/tools/sid_collision_reference.py <TorchEasyRec checkout> tests/data/sid
"""
import importlib.util
import json
import os
import sys
import types

import numpy as np


def load_collision(root):
    logging_util = types.ModuleType("tzrec.utils.logging_util")

    class ProgressLogger:
        def __init__(self, *args, **kwargs):
            pass

        def log(self, *args, **kwargs):
            pass

    logging_util.ProgressLogger = ProgressLogger
    for name in ("tzrec", "tzrec.utils"):
        sys.modules.setdefault(name, types.ModuleType(name))
    sys.modules["tzrec.utils.logging_util"] = logging_util
    spec = importlib.util.spec_from_file_location("collision", os.path.join(root, "tzrec/utils/sid/collision.py"))
    module = importlib.util.module_from_spec(spec)
    sys.modules["collision"] = module  # dataclasses look their module up
    spec.loader.exec_module(module)
    return module


def main(root, out_dir):
    C = load_collision(root)
    rng = np.random.default_rng(7)
    n = 80
    layer_sizes = (3, 4, 5)
    codes = np.stack([rng.integers(0, 2, n), rng.integers(0, 2, n), rng.integers(0, 3, n)], 1).astype(np.int64)
    int_ids = rng.integers(-2**62, 2**62, n).astype(np.int64)
    int_ids[5] = int_ids[9]
    str_ids = np.array(["item_%d" % i for i in range(n)], dtype=object)
    str_ids[11] = "é/ünïcode"
    topk = 3
    cand_flat = rng.integers(0, 5, (n, topk, 3)).astype(np.int64).reshape(n, topk * 3)
    cfg = C.CollisionResolutionConfig(layer_sizes=layer_sizes, capacity=2)
    out = {}
    for name, ids in (("int", int_ids), ("str", str_ids)):
        plan = C.prepare_collision_plan(ids, codes, cfg)
        last_row_of = {}
        for r in range(n):
            last_row_of[ids[r]] = r
        own = np.stack([cand_flat[last_row_of[ids[r]]][2::3] for r in plan.overflow_rows.tolist()])
        for strategy, resolver, cands in (("candidate", C.KnnCollisionResolver(), own),
                                          ("random", C.RandomCollisionResolver(4), None)):
            res = resolver.resolve(plan, cands)
            s = res.stats
            out["%s_%s" % (name, strategy)] = dict(
                last_codes=res.resolved_last_codes.tolist(), slots=res.slot_indices.tolist(),
                stats=[s.total_items, s.raw_collision_buckets, s.final_collision_buckets, s.relocated_count,
                       s.unresolved_count, s.max_final_bucket_size])
        out["%s_hash" % name] = [int(h) for h in C.stable_order_hash(ids)[:4]]
    # Appending: the first 50 integer-id items resolved and published, then the other 30 appended
    # onto that corpus's occupancy (candidate strategy).
    def candidates_of(ids, rows, plan):
        last_row_of = {}
        for r in rows:
            last_row_of[ids[r]] = r
        return np.stack([cand_flat[last_row_of[ids[rows[i]]]][2::3] for i in plan.overflow_rows.tolist()])
    first, rest = list(range(50)), list(range(50, n))
    plan = C.prepare_collision_plan(int_ids[first], codes[first], cfg)
    res = C.KnnCollisionResolver().resolve(plan, candidates_of(int_ids, first, plan))
    keys = C.sid_bucket_keys(codes[first], layer_sizes) - codes[first][:, -1] + res.resolved_last_codes
    prior_keys, prior_counts = np.unique(keys, return_counts=True)
    prior = C.PriorOccupancy(prior_keys.astype(np.int64), prior_counts.astype(np.int64))
    plan = C.prepare_collision_plan(int_ids[rest], codes[rest], cfg, prior=prior)
    res = C.KnnCollisionResolver().resolve(plan, candidates_of(int_ids, rest, plan))
    s = res.stats
    out["append_int_candidate"] = dict(
        last_codes=res.resolved_last_codes.tolist(), slots=res.slot_indices.tolist(),
        stats=[s.total_items, s.raw_collision_buckets, s.final_collision_buckets, s.relocated_count,
               s.unresolved_count, s.max_final_bucket_size])
    with open(os.path.join(out_dir, "items.csv"), "w") as f:
        f.write("item_id,str_id,codes,candidate_codes\n")
        for r in range(n):
            f.write('%d,%s,"%s","%s"\n' % (int_ids[r], str_ids[r], ",".join(map(str, codes[r])),
                                          ",".join(map(str, cand_flat[r]))))
    with open(os.path.join(out_dir, "expected.json"), "w") as f:
        json.dump(out, f)


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
