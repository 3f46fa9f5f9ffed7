#!/usr/bin/env python3
"""Rewrites a selector model file (format 1) without XGBoost's own model of each booster
(OpModel fields 9 and 14), keeping everything else byte for byte, as format 2: the trees
laid out for prediction (fields 16 and 17) then serve alone. Only for files that carry
those trees for every booster (a format-1 reader checked them against XGBoost to the bit
on every load); refuses any other. Usage: strip_xgboost.py IN OUT"""
import struct
import sys
import zlib

MAGIC = b"OPSCHEDM"


def varint(b, i):
    r = s = 0
    while True:
        c = b[i]
        i += 1
        r |= (c & 0x7F) << s
        s += 7
        if c < 0x80:
            return r, i


def put_varint(v):
    out = bytearray()
    while True:
        c = v & 0x7F
        v >>= 7
        out.append(c | (0x80 if v else 0))
        if not v:
            return bytes(out)


def fields(b):
    """(field number, raw bytes of the whole field including its key) in order."""
    i = 0
    while i < len(b):
        start = i
        key, i = varint(b, i)
        wire = key & 7
        if wire == 0:
            _, i = varint(b, i)
            value = None
        elif wire == 1:
            i += 8
            value = None
        elif wire == 5:
            i += 4
            value = None
        elif wire == 2:
            n, i = varint(b, i)
            value = b[i:i + n]
            i += n
        else:
            raise SystemExit(f"unexpected wire type {wire}")
        yield key >> 3, b[start:i], value


def main():
    data = open(sys.argv[1], "rb").read()
    if data[:8] != MAGIC:
        raise SystemExit("not a selector model")
    version, crc, size = struct.unpack("<IIQ", data[8:24])
    payload = data[24:]
    if version != 1 or size != len(payload) or zlib.crc32(payload) != crc:
        raise SystemExit(f"expected an intact format-1 model (version {version})")
    out = bytearray()
    for number, raw, value in fields(payload):
        if number != 8:
            out += raw
            continue
        op = bytearray()
        present = set()
        for n, r, _ in fields(value):
            present.add(n)
            if n not in (9, 14):
                op += r
        if not {16, 17} <= present:
            raise SystemExit("an op without its laid-out trees: keep XGBoost's model")
        out += put_varint((8 << 3) | 2) + put_varint(len(op)) + op
    out = bytes(out)
    header = MAGIC + struct.pack("<IIQ", 2, zlib.crc32(out), len(out))
    open(sys.argv[2], "wb").write(header + out)
    print(f"{sys.argv[1]}: {len(data)} bytes -> {sys.argv[2]}: {len(header) + len(out)} bytes")


if __name__ == "__main__":
    main()
