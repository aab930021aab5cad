#!/usr/bin/env python3
"""Checks the event-time checkpoints of the KafkaDataset e2e tests (tests/e2e/kafka_*_test.sh).

Usage: kafka_event_time_checkpoints.py MODEL_DIR RANKS

The tests' stream: message i holds rows with the timestamp 1700000000 + i seconds, 40 rows per
message, spread over RANKS x 2 partitions (partition p holds messages p, p + P, ...); loader
worker w of rank r reads partition 2r + w; workers alternate, 64 rows per batch, 40 steps. The
time of a step is the earliest over the ranks of their batch's last message (quorum 1); a
checkpoint is saved when that time crosses a 10 s (Unix-epoch-aligned) boundary, and at the last
step. Compares the expected steps and watermarks with MODEL_DIR's checkpoints
(dataloader_state.json's __data_ts_watermark__) and prints the steps.
"""
import json
import os
import sys

model_dir, ranks = sys.argv[1], int(sys.argv[2])
WORKERS, BATCH, ROWS_PER_MESSAGE, STEPS, BASE, INTERVAL = 2, 64, 40, 40, 1700000000, 10
partitions = ranks * WORKERS
expected, last = {}, None
for step in range(STEPS):
    worker, k = step % WORKERS, step // WORKERS  # the k-th batch of the worker
    j = (BATCH * k + BATCH - 1) // ROWS_PER_MESSAGE  # its last message within its partition
    t = min(BASE + partitions * j + WORKERS * rank + worker for rank in range(ranks))
    if last is None:
        last = t
    elif t // INTERVAL > last // INTERVAL or step == STEPS - 1:
        expected[step] = t
        last = t
got = {}
for name in os.listdir(model_dir):
    if name.startswith("model.ckpt-"):
        state = json.load(open(os.path.join(model_dir, name, "dataloader_state.json")))
        got[int(name.split("-")[1])] = state.get("__data_ts_watermark__")
assert got == expected, (sorted(got.items()), sorted(expected.items()))
print(f"{ranks}-rank event-time checkpoints at steps {sorted(got)}")
