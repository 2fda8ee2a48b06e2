"""A PROTOCOL A test backend for the 16-bit floats on the wire: declares f16 and bf16 (and the hello
profile keys given as one JSON object in argv[1]) and answers every einsum with its first input, every
element's sign bit flipped: two bytes per element, little-endian, so the high byte's top bit.
Needs only python3."""

import json
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "support"))
import protocol_a as pa  # noqa: E402

extra = json.loads(sys.argv[1]) if len(sys.argv) > 1 else {}
for msg in pa.requests():
    if msg.get("hello"):
        hello = {"protocol": "einfuzz-backend/1", "name": "half-echo", "dtypes": ["f16", "bf16", "f32"]}
        hello.update(extra)
        pa.send(hello)
        continue
    size = {"f16": 2, "bf16": 2, "f32": 4}[msg["dtype"]]
    inputs = [pa.read_exact(pa.elements(i["shape"]) * size) for i in msg["inputs"]]
    data = bytearray(inputs[0])
    for k in range(size - 1, len(data), size):
        data[k] ^= 0x80
    pa.send({"id": msg["id"], "status": "ok", "shape": msg["inputs"][0]["shape"]}, bytes(data))
