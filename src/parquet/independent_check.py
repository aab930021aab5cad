#!/usr/bin/env python3
"""Independent check of a Parquet file written by tzrec's writer (used by writer_test.cc).

Written from the Parquet and Thrift compact-protocol specifications with the Python standard
library only (no pyarrow on this platform), sharing no code with the C++ reader. It parses the
footer (FileMetaData) with a generic compact-protocol decoder, then decodes every REQUIRED INT64
column whose pages are PLAIN (UNCOMPRESSED or GZIP) and prints, as JSON:
  {"num_rows", "created_by", "fields": [names of the root's children],
   "row_groups": [num_rows...], "int64_columns": {name: [values...]}}

Usage: independent_check.py FILE
"""
import json
import struct
import sys
import zlib


class Compact:
    def __init__(self, data, pos=0):
        self.data = data
        self.pos = pos

    def byte(self):
        b = self.data[self.pos]
        self.pos += 1
        return b

    def varint(self):
        shift = result = 0
        while True:
            b = self.byte()
            result |= (b & 0x7F) << shift
            if not b & 0x80:
                return result
            shift += 7

    def zigzag(self):
        v = self.varint()
        return (v >> 1) ^ -(v & 1)

    def value(self, t):
        if t in (1, 2):  # bool in a struct field header
            return t == 1
        if t == 3:
            return self.byte()
        if t in (4, 5, 6):
            return self.zigzag()
        if t == 7:
            v = struct.unpack_from("<d", self.data, self.pos)[0]
            self.pos += 8
            return v
        if t == 8:
            n = self.varint()
            v = bytes(self.data[self.pos:self.pos + n])
            self.pos += n
            return v
        if t in (9, 10):
            h = self.byte()
            n, et = h >> 4, h & 0x0F
            if n == 15:
                n = self.varint()
            if et in (1, 2):
                return [self.byte() == 1 for _ in range(n)]
            return [self.value(et) for _ in range(n)]
        if t == 12:
            return self.struct()
        raise ValueError("unsupported thrift type %d" % t)

    def struct(self):
        fields = {}
        last = 0
        while True:
            h = self.byte()
            t = h & 0x0F
            if t == 0:
                return fields
            delta = h >> 4
            fid = last + delta if delta else self.zigzag()
            last = fid
            fields[fid] = self.value(t)


def main(path):
    with open(path, "rb") as f:
        data = f.read()
    assert data[:4] == b"PAR1" and data[-4:] == b"PAR1", "bad magic"
    (footer_len,) = struct.unpack_from("<I", data, len(data) - 8)
    md = Compact(data, len(data) - 8 - footer_len).struct()
    schema = md[2]
    root = schema[0]
    # Flat schemas only: the root's children are the leaves (groups are skipped with their subtree).
    fields = []
    leaves = []  # (name, type, repetition)
    i = 1
    while i < len(schema):
        el = schema[i]
        fields.append(el[4].decode())
        if 5 in el and el[5] > 0:  # a group: skip its subtree
            todo = el[5]
            i += 1
            while todo:
                todo -= 1
                todo += schema[i].get(5, 0)
                i += 1
            leaves.append(None)
            continue
        leaves.append((el[4].decode(), el.get(1), el.get(3, 0)))
        i += 1
    assert len(fields) == root[5]
    out = {"num_rows": md[3], "created_by": md.get(6, b"").decode(), "fields": fields,
           "row_groups": [rg[3] for rg in md[4]], "int64_columns": {}}
    for ci, leaf in enumerate(leaves):
        if leaf is None or leaf[1] != 2 or leaf[2] != 0:
            continue  # not a REQUIRED INT64 leaf
        values = []
        for rg in md[4]:
            meta = rg[1][ci][3]
            codec = meta[4]
            pos = meta.get(11, meta[9]) if meta.get(11, 0) >= 4 else meta[9]
            end = pos + meta[7]
            while pos < end:
                r = Compact(data, pos)
                header = r.struct()
                body = data[r.pos:r.pos + header[3]]
                pos = r.pos + header[3]
                if header[1] != 0:
                    continue  # only PLAIN data pages are expected here
                assert header[5][2] == 0, "expected PLAIN encoding"
                if codec == 2:
                    body = zlib.decompress(body, 31)
                else:
                    assert codec == 0, "codec %d" % codec
                n = header[5][1]
                values.extend(struct.unpack_from("<%dq" % n, body, 0))
        out["int64_columns"][leaf[0]] = values
    print(json.dumps(out))


if __name__ == "__main__":
    main(sys.argv[1])
