#!/usr/bin/env python3
"""A PROTOCOL A backend that answers VJP requests (protocol_tests: the `vjp` wire both ways).

Usage: vjp_backend.py MODE [TIE_RULE]. It declares `"vjp"` in `ops` (and `tie_rule` when given),
semantics `ordered`, f64 only, and computes, in pure Python (no numpy):
  forward  `i -> i` (a copy), `i, i -> i` (elementwise product), reduce `a b -> a` sum;
  VJP      of each: g; (g·x1, g·x0); g copied along b.
Every other case is `unsupported`. MODE `none` answers correctly; the others break the VJP
response on purpose: `shapes-short` (one shape too few), `shape-not-shapes` (a forward `shape`),
`short-payload` (the last 8 bytes missing), `long-payload` (8 bytes too many), `wrong-shape` (the
first cotangent one element longer, bytes to match: a well-formed wrong answer), `bad-entry`
(a shape entry that is not lengths), `huge` (a shape over the limits).
"""

import os
import struct
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "support"))
from protocol_a import elements, read_exact, requests, send  # noqa: E402

MODE = sys.argv[1] if len(sys.argv) > 1 else "none"
TIE_RULE = sys.argv[2] if len(sys.argv) > 2 else None


def unpack(b):
    return list(struct.unpack("<%dd" % (len(b) // 8), b))


def pack(v):
    return struct.pack("<%dd" % len(v), *v)


def forward(msg, xs):
    """The forward result (shape, values), or None when unsupported."""
    pattern = msg["pattern"]
    if msg["op"] == "einsum" and pattern == "i -> i":
        return msg["inputs"][0]["shape"], xs[0]
    if msg["op"] == "einsum" and pattern == "i, i -> i":
        return msg["inputs"][0]["shape"], [a * b for a, b in zip(xs[0], xs[1])]
    if msg["op"] == "reduce" and pattern == "a b -> a" and msg.get("reduction") == "sum":
        a, b = msg["inputs"][0]["shape"]
        return [a], [sum(xs[0][i * b:(i + 1) * b], 0.0) for i in range(a)]
    return None


def vjp(msg, xs, g):
    """One (shape, values) per forward input, or None when unsupported."""
    pattern = msg["pattern"]
    shapes = [i["shape"] for i in msg["inputs"][:-1]]
    if msg["of"] == "einsum" and pattern == "i -> i":
        return [(shapes[0], g)]
    if msg["of"] == "einsum" and pattern == "i, i -> i":
        return [(shapes[0], [a * b for a, b in zip(g, xs[1])]), (shapes[1], [a * b for a, b in zip(g, xs[0])])]
    if msg["of"] == "reduce" and pattern == "a b -> a" and msg.get("reduction") == "sum":
        a, b = shapes[0]
        return [(shapes[0], [g[i] for i in range(a) for _ in range(b)])]
    return None


for msg in requests():
    if msg.get("hello"):
        hello = {"protocol": "einfuzz-backend/1", "name": "vjp-test " + MODE, "ops": ["einsum", "reduce", "vjp"],
                 "dtypes": ["f64"], "reductions": ["sum"], "semantics": "ordered"}
        if TIE_RULE is not None:
            hello["tie_rule"] = TIE_RULE
        send(hello)
        continue
    # Every input's bytes, the cotangent's last for a VJP (it is the last entry of "inputs").
    xs = [unpack(read_exact(elements(i["shape"]) * 8)) for i in msg["inputs"]]
    rid = msg["id"]
    if msg["op"] != "vjp":
        out = forward(msg, xs)
        if out is None:
            send({"id": rid, "status": "unsupported", "message": "vjp-test: not this forward case"})
        else:
            send({"id": rid, "status": "ok", "shape": out[0]}, pack(out[1]))
        continue
    grads = vjp(msg, xs[:-1], xs[-1])
    if grads is None:
        send({"id": rid, "status": "unsupported", "message": "vjp-test: not this vjp case"})
        continue
    shapes = [s for s, _ in grads]
    payload = b"".join(pack(v) for _, v in grads)
    if MODE == "shapes-short":
        shapes = shapes[:-1]
    elif MODE == "shape-not-shapes":
        send({"id": rid, "status": "ok", "shape": shapes[0]}, payload)
        continue
    elif MODE == "short-payload":
        payload = payload[:-8]
    elif MODE == "long-payload":
        payload += pack([1.0])
    elif MODE == "wrong-shape":
        shapes[0] = [elements(shapes[0]) + 1]
        payload = pack(grads[0][1] + [0.0]) + b"".join(pack(v) for _, v in grads[1:])
    elif MODE == "bad-entry":
        shapes[0] = ["two"]
    elif MODE == "huge":
        shapes[0] = [1 << 40, 1 << 40]
    send({"id": rid, "status": "ok", "shapes": shapes}, payload)
