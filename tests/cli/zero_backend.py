#!/usr/bin/env python3
"""A PROTOCOL A backend that is wrong on purpose: every einsum returns zeros of the right shape.

For the CLI tests (issue 10): a finite answer for a non-finite class must be a mismatch whatever
the certificates say. Handles einsum patterns of plain labels (no ellipsis, no parentheses) on
f32/f64; anything else is `unsupported`. Needs only python3.

With `--first-sight` it is a stateful backend: a case it has been sent before (the same request and
input bytes) is `unsupported`, so no failure repeats (fuzz_external/known: a failure its shrunk case
does not repeat is not a finding). With `--warm-up` it answers `unsupported` to its first plain
einsum and zeros from the second on, so a failure does not repeat in a new process.
"""

import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "support"))
from protocol_a import elements, read_exact, requests, send  # noqa: E402

SIZES = {"f32": 4, "f64": 8}


def main():
    first_sight = "--first-sight" in sys.argv[1:]
    warm_up = "--warm-up" in sys.argv[1:]
    seen = set()
    for req in requests():
        if req.get("hello"):
            send({"protocol": "einfuzz-backend/1", "name": "zero", "ops": ["einsum"], "dtypes": ["f32", "f64"],
                  "semantics": "any-order", "factoring": True})
            continue
        size = SIZES.get(req.get("dtype"), 0)
        data = [read_exact(elements(i["shape"]) * size) for i in req.get("inputs", [])]
        key = (repr({k: v for k, v in req.items() if k != "id"}), tuple(data))
        again = first_sight and key in seen
        seen.add(key)
        pattern = req.get("pattern", "")
        inputs = req.get("inputs", [])
        lhs, arrow, rhs = pattern.partition("->")
        # Only well-formed plain einsums: libFuzzer's first inputs decode to patterns such as "" and "->"
        # with no operand, which are unsupported too.
        if (again or req.get("op") != "einsum" or "..." in pattern or "(" in pattern or size == 0 or not arrow
                or not inputs or len(lhs.split(",")) != len(inputs)):
            send({"id": req["id"], "status": "unsupported", "message": "zero_backend: plain einsums only"})
            continue
        lengths = {}
        repeated_differ = False
        for operand, inp in zip(lhs.split(","), req["inputs"]):
            own = {}
            for label, length in zip(operand.split(), inp["shape"]):
                repeated_differ = repeated_differ or own.setdefault(label, length) != length
                lengths[label] = length
        if repeated_differ:
            # Wrong in values only: a label repeated in one operand with two lengths is rejected, as
            # SEMANTICS does (the stored numpy divergences `a a -> a` on (0, 1) are seeds).
            send({"id": req["id"], "status": "error", "message": "zero_backend: a repeated label's lengths differ"})
            continue
        if any(label not in lengths for label in rhs.split()):
            # Not a plain einsum it can shape (a label the checker would reject, such as `a$`).
            send({"id": req["id"], "status": "unsupported", "message": "zero_backend: plain einsums only"})
            continue
        shape = [lengths[label] for label in rhs.split()]
        if warm_up:
            warm_up = False
            send({"id": req["id"], "status": "unsupported", "message": "zero_backend: warming up"})
            continue
        send({"id": req["id"], "status": "ok", "shape": shape}, bytes(elements(shape) * size))


if __name__ == "__main__":
    main()
