#!/usr/bin/env python3
"""Writes small_tokenizer.json: the GPT-NeoX byte-level BPE tokenizer.json of TorchEasyRec's test
data (data/test/tokenizer.json) cut down to what the test strings below need.

Kept: the normalizer, pre-tokenizer, post-processor and decoder as they are; every added token;
the 256 byte symbols and every symbol the test strings' merges use or make, with their original ids;
the merges those strings use, in their original order. BPE applies the lowest-ranked applicable
merge first, so keeping the used merges in their relative order gives the same tokens as the full
file for these strings (the cut file then has the full file's ids and table size, 50277).

Usage: make_small_tokenizer.py <full tokenizer.json> <out small_tokenizer.json>
It encodes with its own reference implementation (Python's unicodedata for the character classes
of the GPT-2 split pattern) and prints each test string's ids.
"""
import json
import sys
import unicodedata

TEXTS = [
    "abc efg", "xyz", "hij", "0", "ABC efg", "HIJ", "abc", "efg",
    "Hello, world! It's 2024.", "h\u00e9llo  w\u00f6rld", "\u4e2d\u6587\u5206\u8bcd",
    "a\n\nb  c   ", "we'll they're", "<|endoftext|>abc", "hello", "world",
]


def is_space(c):
    return c.isspace()


def klass(c):
    cat = unicodedata.category(c)
    return "L" if cat[0] == "L" else "N" if cat[0] == "N" else "S" if is_space(c) else "P"


def pre_tokenize(s):
    """GPT-2's pattern: 's|'t|'re|'ve|'m|'ll|'d| ?\\p{L}+| ?\\p{N}+| ?[^\\s\\p{L}\\p{N}]+|\\s+(?!\\S)|\\s+"""
    out, i, n = [], 0, len(s)
    while i < n:
        if s[i] == "'":
            hit = next((x for x in ("s", "t", "re", "ve", "m", "ll", "d") if s.startswith(x, i + 1)), None)
            if hit:
                out.append("'" + hit)
                i += 1 + len(hit)
                continue
        j = i + 1 if s[i] == " " and i + 1 < n and not is_space(s[i + 1]) else i
        if not is_space(s[j]):
            k, want = j, klass(s[j])
            while k < n and klass(s[k]) == want:
                k += 1
            out.append(s[i:k])
            i = k
            continue
        k = i
        while k < n and is_space(s[k]):
            k += 1
        if k < n and k - i >= 2:
            k -= 1  # leave one space for the next word
        out.append(s[i:k])
        i = k
    return out


def byte_map():
    keep = list(range(33, 127)) + list(range(161, 173)) + list(range(174, 256))
    extra = [b for b in range(256) if b not in keep]
    return {**{b: chr(b) for b in keep}, **{b: chr(256 + i) for i, b in enumerate(extra)}}


BYTES = byte_map()


def bpe(word, ranks, used):
    sym = list(word)
    while len(sym) > 1:
        best = min(((ranks[p], i) for i, p in enumerate(zip(sym, sym[1:])) if p in ranks), default=None)
        if best is None:
            break
        pair = (sym[best[1]], sym[best[1] + 1])
        used.add(pair)
        merged, i = [], 0
        while i < len(sym):
            if i + 1 < len(sym) and (sym[i], sym[i + 1]) == pair:
                merged.append(sym[i] + sym[i + 1])
                i += 2
            else:
                merged.append(sym[i])
                i += 1
        sym = merged
    return sym


def encode(text, doc, ranks, used, symbols):
    text = unicodedata.normalize("NFC", text)
    added = sorted(doc["added_tokens"], key=lambda t: -len(t["content"]))
    vocab = doc["model"]["vocab"]
    ids, start, i = [], 0, 0

    def plain(segment):
        for word in pre_tokenize(segment):
            for s in bpe("".join(BYTES[b] for b in word.encode("utf-8")), ranks, used):
                symbols.add(s)
                ids.append(vocab[s])

    while i < len(text):
        hit = next((t for t in added if text.startswith(t["content"], i)), None)
        if hit is None:
            i += 1
            continue
        plain(text[start:i])
        ids.append(hit["id"])
        i += len(hit["content"])
        start = i
    plain(text[start:])
    return ids


def main():
    doc = json.load(open(sys.argv[1], encoding="utf-8"))
    merges = [tuple(m.split(" ", 1)) if isinstance(m, str) else tuple(m) for m in doc["model"]["merges"]]
    ranks = {m: r for r, m in enumerate(merges)}
    used, symbols = set(), set(BYTES.values())
    for text in TEXTS:
        print(repr(text), encode(text, doc, ranks, used, symbols))
    model = doc["model"]
    for left, right in used:
        symbols.update((left, right, left + right))
    model["merges"] = [" ".join(m) for m in merges if m in used]
    model["vocab"] = {s: i for s, i in model["vocab"].items() if s in symbols}
    with open(sys.argv[2], "w", encoding="utf-8") as f:
        json.dump(doc, f, ensure_ascii=False, indent=1)
        f.write("\n")


if __name__ == "__main__":
    main()
