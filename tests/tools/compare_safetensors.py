#!/usr/bin/python3
"""Compares the tensors of two safetensors files (independent of tzrec's reader).

Usage: compare_safetensors.py A B [--atol X]; exits 1 and prints the first difference.
"""
import json
import struct
import sys

import numpy as np

DTYPES = {"F32": np.float32, "F64": np.float64, "I64": np.int64, "I32": np.int32,
          "F16": np.float16, "U8": np.uint8, "I8": np.int8, "I16": np.int16, "BOOL": np.bool_}


def read(path):
    with open(path, "rb") as f:
        blob = f.read()
    (n,) = struct.unpack("<Q", blob[:8])
    header = json.loads(blob[8:8 + n])
    base = 8 + n
    out = {}
    for name, info in header.items():
        if name == "__metadata__":
            continue
        b, e = info["data_offsets"]
        arr = np.frombuffer(blob[base + b:base + e], dtype=DTYPES[info["dtype"]])
        out[name] = arr.reshape(info["shape"])
    return out


def main():
    a, b = read(sys.argv[1]), read(sys.argv[2])
    atol = float(sys.argv[4]) if len(sys.argv) > 4 and sys.argv[3] == "--atol" else 0.0
    if sorted(a) != sorted(b):
        print("different tensor names:", sorted(set(a) ^ set(b)))
        return 1
    for name in sorted(a):
        if a[name].shape != b[name].shape:
            print(f"{name}: shape {a[name].shape} vs {b[name].shape}")
            return 1
        diff = np.max(np.abs(a[name].astype(np.float64) - b[name].astype(np.float64))) if a[name].size else 0.0
        if diff > atol:
            print(f"{name}: max abs diff {diff}")
            return 1
    print(f"{len(a)} tensors equal (atol {atol})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
