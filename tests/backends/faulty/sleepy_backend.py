#!/usr/bin/env python3
"""A PROTOCOL A backend that takes its time (pipeline_test.cpp): a correct passthrough (`i -> i` on
f64, the output is the input) that sleeps SECONDS per case and logs when it worked.

Usage: sleepy_backend.py SECONDS LOG [--late-payload] [--ordered]. After answering request ID it appends
"ID BEGIN END" to LOG: the time.monotonic() (one clock for every process of the machine) at which
it read the request line and at which its answer was written, so a test can see whether two
backends worked on a case at the same time without timing the harness. `--late-payload` sleeps
between reading the request line and reading its payload (the harness is still sending it);
`--ordered` declares ordered semantics (judged against the reference's result, no multiset).
Needs only python3 (no numpy).
"""

import os
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "support"))
from protocol_a import elements, read_exact, requests, send  # noqa: E402

SECONDS = float(sys.argv[1])
LOG = sys.argv[2]
LATE_PAYLOAD = "--late-payload" in sys.argv[3:]
SEMANTICS = "ordered" if "--ordered" in sys.argv[3:] else "any-order"
for msg in requests():
    if msg.get("hello"):
        send({"protocol": "einfuzz-backend/1", "name": "sleepy", "dtypes": ["f64"], "semantics": SEMANTICS})
        continue
    begin = time.monotonic()
    if LATE_PAYLOAD:
        time.sleep(SECONDS)
    payloads = [read_exact(elements(i["shape"]) * 8) for i in msg["inputs"]]
    if not LATE_PAYLOAD:
        time.sleep(SECONDS)
    send({"id": msg["id"], "status": "ok", "shape": msg["inputs"][0]["shape"]}, payloads[0])
    end = time.monotonic()
    with open(LOG, "a") as log:
        log.write("%d %.6f %.6f\n" % (msg["id"], begin, end))
