#!/usr/bin/env python3
"""A PROTOCOL A backend that is wrong on purpose: every einsum returns zeros of the right shape.

For the CLI tests (issue 10): a finite answer for a non-finite class must be a mismatch whatever
the certificates say. Handles einsum patterns of plain labels (no ellipsis, no parentheses) on
f32/f64; anything else is `unsupported`. Needs only python3.
"""

import json
import sys

stdin = sys.stdin.buffer
stdout = sys.stdout.buffer
SIZES = {"f32": 4, "f64": 8}


def send(obj, payload=b""):
    stdout.write(json.dumps(obj).encode() + b"\n" + payload)
    stdout.flush()


def main():
    while True:
        line = stdin.readline()
        if not line:
            return
        req = json.loads(line)
        if req.get("hello"):
            send({"protocol": "einfuzz-backend/1", "name": "zero", "ops": ["einsum"], "dtypes": ["f32", "f64"],
                  "semantics": "any-order", "factoring": True})
            continue
        if req.get("bye"):
            return
        size = SIZES.get(req.get("dtype"), 0)
        for i in req.get("inputs", []):
            n = 1
            for d in i["shape"]:
                n *= d
            stdin.read(n * size)
        pattern = req.get("pattern", "")
        if req.get("op") != "einsum" or "..." in pattern or "(" in pattern or size == 0:
            send({"id": req["id"], "status": "unsupported", "message": "zero_backend: plain einsums only"})
            continue
        lhs, rhs = pattern.split("->")
        lengths = {}
        for operand, inp in zip(lhs.split(","), req["inputs"]):
            for label, length in zip(operand.split(), inp["shape"]):
                lengths[label] = length
        shape = [lengths[label] for label in rhs.split()]
        n = 1
        for d in shape:
            n *= d
        send({"id": req["id"], "status": "ok", "shape": shape}, bytes(n * size))


if __name__ == "__main__":
    main()
