#!/usr/bin/env python3
"""Reference streams of zero-collision hashing for src/embedding/zch_module_test.cc, produced by
TorchRec's own MCHManagedCollisionModule.

The script imports torchrec/modules/mc_modules.py from a TorchRec checkout (nothing of it is
copied here or shared with the engine); the two TorchRec modules that file imports for typing
(embedding_configs, jagged_tensor) are replaced by minimal stand-ins, as the managed-collision
module only needs a JaggedTensor's values. Each case builds an MCHManagedCollisionModule as
TorchEasyRec's Feature.mc_module does (zch_size, eviction_interval, the eviction policy with its
decay_exponent and threshold filter, nothing else), runs seeded random batches through forward()
in training or eval mode, calls evict() on some steps, and records the remapped ids, the evicted
slots and the final state dict.

Run: /usr/bin/python3 tests/tools/zch_reference.py <torchrec checkout> tests/data/zch/mc_reference.json
"""
import importlib.util
import json
import random
import sys
import types

import torch


def load_mc_modules(torchrec_root):
    class JaggedTensor:
        def __init__(self, values, lengths=None, offsets=None, weights=None):
            self._values, self._lengths, self._offsets, self._weights = values, lengths, offsets, weights

        def values(self):
            return self._values

        def lengths(self):
            return self._lengths

        def offsets(self):
            return self._offsets

        def weights_or_none(self):
            return self._weights

    stubs = {
        "torchrec": types.ModuleType("torchrec"),
        "torchrec.modules": types.ModuleType("torchrec.modules"),
        "torchrec.modules.embedding_configs": types.ModuleType("torchrec.modules.embedding_configs"),
        "torchrec.sparse": types.ModuleType("torchrec.sparse"),
        "torchrec.sparse.jagged_tensor": types.ModuleType("torchrec.sparse.jagged_tensor"),
    }
    stubs["torchrec.modules.embedding_configs"].BaseEmbeddingConfig = object
    stubs["torchrec.sparse.jagged_tensor"].JaggedTensor = JaggedTensor
    stubs["torchrec.sparse.jagged_tensor"].KeyedJaggedTensor = object
    sys.modules.update(stubs)
    spec = importlib.util.spec_from_file_location("mc_modules", f"{torchrec_root}/torchrec/modules/mc_modules.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod, JaggedTensor


def threshold_func(mc, text):
    if not text:
        return None
    # TorchEasyRec evaluates the string with these names (tzrec/features/feature.py).
    from functools import partial
    return eval(text, {
        "partial": partial, "torch": torch,
        "average_threshold_filter": mc.average_threshold_filter,
        "dynamic_threshold_filter": mc.dynamic_threshold_filter,
        "probabilistic_threshold_filter": mc.probabilistic_threshold_filter,
    })


def make_policy(mc, kind, decay, filt):
    f = threshold_func(mc, filt)
    if kind == "lfu":
        return mc.LFU_EvictionPolicy(threshold_filtering_func=f)
    if kind == "lru":
        return mc.LRU_EvictionPolicy(decay_exponent=decay, threshold_filtering_func=f)
    return mc.DistanceLFU_EvictionPolicy(decay_exponent=decay, threshold_filtering_func=f)


def run_case(mc, JaggedTensor, case, rng):
    torch.manual_seed(case["torch_seed"])
    m = mc.MCHManagedCollisionModule(
        zch_size=case["zch_size"], device=torch.device("cpu"),
        eviction_policy=make_policy(mc, case["eviction"], case["decay_exponent"], case["threshold_filtering_func"]),
        eviction_interval=case["eviction_interval"])
    steps = []
    id_space = case["id_space"]
    for s in range(case["num_steps"]):
        n = rng.randint(case["min_batch"], case["max_batch"])
        # A skewed draw: small ranks are frequent.
        ids = [int((rng.paretovariate(1.2) - 1) * 7) % id_space * case["id_stride"] + case["id_base"]
               for _ in range(n)]
        training = not (s % 5 == 4)
        call_evict = s % 3 != 1
        m.train(training)
        values = torch.tensor(ids, dtype=torch.int64)
        out = m({"t": JaggedTensor(values=values, lengths=torch.ones(n, dtype=torch.int64))})["t"].values()
        ev = m.evict() if call_evict else "skip"
        steps.append({
            "ids": ids, "training": training, "remapped": out.tolist(),
            "evict_called": call_evict,
            "evicted": None if (ev is None or ev == "skip") else ev.tolist(),
        })
    state = {k: v.tolist() for k, v in m.state_dict().items()}
    return {**case, "steps": steps, "state": state}


def main():
    mc, JaggedTensor = load_mc_modules(sys.argv[1])
    rng = random.Random(20240917)
    cases = []
    filters = ["", "lambda x: (x > 1, 1)", "lambda x: dynamic_threshold_filter(x, 0.5)",
               "average_threshold_filter", "lambda x: probabilistic_threshold_filter(x, 0.3)"]
    i = 0
    for kind in ["lfu", "lru", "distance_lfu"]:
        for decay in ([1.0] if kind == "lfu" else [1.0, 0.5, 2.0]):
            for filt in filters:
                if kind != "lfu" and decay != 1.0 and filt not in ("", "average_threshold_filter"):
                    continue
                case = {
                    "name": f"{kind}_{decay}_{i}", "eviction": kind, "decay_exponent": decay,
                    "threshold_filtering_func": filt,
                    "zch_size": [6, 16, 40][i % 3], "eviction_interval": [1, 2, 3][(i // 3) % 3],
                    "num_steps": 14, "min_batch": [1, 10][i % 2], "max_batch": 40,
                    "id_space": [30, 200, 1000][(i // 2) % 3],
                    "id_stride": [1, 1000003, 7][i % 3], "id_base": [0, -500, 1 << 40][(i // 4) % 3],
                    "torch_seed": 1000 + i,
                }
                cases.append(run_case(mc, JaggedTensor, case, rng))
                i += 1
    with open(sys.argv[2], "w") as f:
        json.dump({"generator": "tests/tools/zch_reference.py", "torch": torch.__version__,
                   "cases": cases}, f, separators=(",", ":"))
        f.write("\n")
    print(f"{len(cases)} cases written to {sys.argv[2]}")


if __name__ == "__main__":
    main()
