#!/usr/bin/env python3
"""Independent checker for TensorBoard event files (standard library only, plus numpy for the
histogram reference). Shares no code with the C++ writer: its own CRC-32C, TFRecord framing and
protobuf wire-format decoding.

  read_tfevents.py events FILE
      Verifies both masked CRC-32C of every record and prints one JSON object per event:
      {"wall_time", "step", "file_version", "values": [{"tag", "simple_value" | "histo"}]}.
      Non-finite floats are written as the strings "nan", "inf", "-inf".
      A corrupt file prints "record N: ..." to stderr and exits with status 1.

  read_tfevents.py histogram FILE
      FILE holds one float per line. Prints, as JSON, the histogram that
      torch.utils.tensorboard.summary.make_histogram builds for those values with
      SummaryWriter's default bins (numpy.histogram over the edges, then trimmed).
"""

import json
import math
import struct
import sys


def _crc32c_table():
    table = []
    for byte in range(256):
        crc = byte
        for _ in range(8):
            crc = (crc >> 1) ^ (0x82F63B78 if crc & 1 else 0)
        table.append(crc)
    return table


_TABLE = _crc32c_table()


def crc32c(data):
    crc = 0xFFFFFFFF
    for byte in data:
        crc = _TABLE[(crc ^ byte) & 0xFF] ^ (crc >> 8)
    return crc ^ 0xFFFFFFFF


def masked_crc32c(data):
    crc = crc32c(data)
    return ((((crc >> 15) | (crc << 17)) & 0xFFFFFFFF) + 0xA282EAD8) & 0xFFFFFFFF


class CorruptFile(Exception):
    pass


def read_varint(buf, pos):
    result = 0
    shift = 0
    while True:
        if pos >= len(buf):
            raise CorruptFile("truncated varint")
        byte = buf[pos]
        pos += 1
        result |= (byte & 0x7F) << shift
        if not byte & 0x80:
            return result, pos
        shift += 7
        if shift >= 70:
            raise CorruptFile("varint too long")


def fields(buf):
    """Yields (field_number, wire_type, value) for one message; value is int or bytes."""
    pos = 0
    while pos < len(buf):
        key, pos = read_varint(buf, pos)
        field, wire = key >> 3, key & 7
        if wire == 0:
            value, pos = read_varint(buf, pos)
        elif wire == 1:
            value = buf[pos:pos + 8]
            pos += 8
        elif wire == 2:
            n, pos = read_varint(buf, pos)
            value = buf[pos:pos + n]
            pos += n
        elif wire == 5:
            value = buf[pos:pos + 4]
            pos += 4
        else:
            raise CorruptFile("wire type %d" % wire)
        if pos > len(buf):
            raise CorruptFile("truncated field %d" % field)
        yield field, wire, value


def f64(raw):
    return struct.unpack("<d", raw)[0]


def doubles(wire, raw):
    if wire == 1:
        return [f64(raw)]
    return [v for (v,) in struct.iter_unpack("<d", raw)]


def jsonable(x):
    if isinstance(x, float) and not math.isfinite(x):
        return "nan" if math.isnan(x) else ("inf" if x > 0 else "-inf")
    if isinstance(x, list):
        return [jsonable(v) for v in x]
    if isinstance(x, dict):
        return {k: jsonable(v) for k, v in x.items()}
    return x


def decode_histogram(buf):
    names = {1: "min", 2: "max", 3: "num", 4: "sum", 5: "sum_squares"}
    h = {name: 0.0 for name in names.values()}
    h["bucket_limit"] = []
    h["bucket"] = []
    for field, wire, value in fields(buf):
        if field in names:
            h[names[field]] = f64(value)
        elif field == 6:
            h["bucket_limit"] += doubles(wire, value)
        elif field == 7:
            h["bucket"] += doubles(wire, value)
    return h


def decode_event(buf):
    event = {"wall_time": 0.0, "step": 0, "file_version": "", "values": []}
    for field, wire, value in fields(buf):
        if field == 1:
            event["wall_time"] = f64(value)
        elif field == 2:
            event["step"] = value - (1 << 64) if value >= (1 << 63) else value
        elif field == 3:
            event["file_version"] = value.decode("utf-8")
        elif field == 5:
            for sfield, _, svalue in fields(value):
                if sfield != 1:
                    continue
                item = {}
                for vfield, _, vvalue in fields(svalue):
                    if vfield == 1:
                        item["tag"] = vvalue.decode("utf-8")
                    elif vfield == 2:
                        item["simple_value"] = struct.unpack("<f", vvalue)[0]
                    elif vfield == 5:
                        item["histo"] = decode_histogram(vvalue)
                event["values"].append(item)
    return event


def read_events(path):
    with open(path, "rb") as f:
        data = f.read()
    pos = 0
    index = 0
    while pos < len(data):
        if len(data) - pos < 12:
            raise CorruptFile("record %d: truncated header" % index)
        header = data[pos:pos + 8]
        (length,) = struct.unpack("<Q", header)
        (length_crc,) = struct.unpack("<I", data[pos + 8:pos + 12])
        if masked_crc32c(header) != length_crc:
            raise CorruptFile("record %d: length crc mismatch" % index)
        body = data[pos + 12:pos + 12 + length]
        footer = data[pos + 12 + length:pos + 16 + length]
        if len(body) != length or len(footer) != 4:
            raise CorruptFile("record %d: truncated" % index)
        if masked_crc32c(body) != struct.unpack("<I", footer)[0]:
            raise CorruptFile("record %d: data crc mismatch" % index)
        try:
            yield decode_event(body)
        except CorruptFile as e:
            raise CorruptFile("record %d: %s" % (index, e))
        pos += 16 + length
        index += 1


def default_bins():
    # SummaryWriter.__init__ in torch/utils/tensorboard/writer.py.
    v = 1e-12
    buckets = []
    while v < 1e20:
        buckets.append(v)
        v *= 1.1
    return [-b for b in reversed(buckets)] + [0] + buckets


def reference_histogram(values):
    # torch/utils/tensorboard/summary.py make_histogram (without max_bins).
    import numpy as np

    values = np.asarray(values, dtype=float).reshape(-1)
    counts, limits = np.histogram(values, bins=default_bins())
    # torch 1.13 writes np.greater(counts, 0, dtype=np.int32), which numpy >= 1.24 rejects; the
    # same 0/1 occupancy, cast after the comparison:
    cum_counts = np.cumsum(np.greater(counts, 0).astype(np.int32))
    start, end = np.searchsorted(cum_counts, [0, cum_counts[-1] - 1], side="right")
    start = int(start)
    end = int(end) + 1
    counts = counts[start - 1:end] if start > 0 else np.concatenate([[0], counts[:end]])
    limits = limits[start:end + 1]
    return {
        "min": float(values.min()), "max": float(values.max()), "num": float(len(values)),
        "sum": float(values.sum()), "sum_squares": float(values.dot(values)),
        "bucket_limit": [float(x) for x in limits], "bucket": [float(x) for x in counts],
    }


def main(argv):
    if len(argv) != 3 or argv[1] not in ("events", "histogram"):
        sys.stderr.write(__doc__)
        return 2
    if argv[1] == "histogram":
        with open(argv[2]) as f:
            values = [float(line) for line in f if line.strip()]
        print(json.dumps(jsonable(reference_histogram(values))))
        return 0
    try:
        for event in read_events(argv[2]):
            print(json.dumps(jsonable(event)))
    except CorruptFile as e:
        sys.stderr.write("%s\n" % e)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
