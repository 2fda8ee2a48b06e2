#!/usr/bin/env python3
"""A PROTOCOL A backend that misbehaves on purpose (protocol_tests).

Usage: faulty_backend.py MODE. It answers every case correctly as a passthrough (`i -> i` on f64:
the output is the input), except a case whose pattern uses the label `boom`, where it does what
MODE says. Mode `reduce-trap` declares reduce and exits (status 9) on any reduce request. Needs
only python3 (no numpy).
"""

import json
import os
import signal
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "support"))
from protocol_a import elements, read_exact, requests, stdout  # noqa: E402
from protocol_a import send as send_line  # noqa: E402

MODE = sys.argv[1] if len(sys.argv) > 1 else "none"
hello_mode = MODE.startswith("hello-")
pending = b""  # double-late: the second answer to the previous request, sent with the next one
for msg in requests():
    if msg.get("hello"):
        if MODE == "hello-garbage":
            stdout.write(b"this is not json\n")
            stdout.flush()
            continue
        if MODE == "hello-exit":
            sys.stderr.write("cannot initialise: missing licence file\n")
            sys.exit(7)
        if MODE == "hello-wrong-protocol":
            send_line({"protocol": "einfuzz-backend/0"})
            continue
        if MODE == "hello-hang":  # never answers the hello
            time.sleep(3600)
        if MODE == "slow-hello":
            time.sleep(0.3)
        hello = {"protocol": "einfuzz-backend/1", "name": "faulty " + MODE, "dtypes": ["f64"]}
        if MODE == "reduce-trap":
            hello.update(ops=["einsum", "reduce"], reductions=["sum", "max"])
        if MODE == "hello-twice":  # both in one write: the harness reads them together
            line = json.dumps(hello).encode() + b"\n"
            stdout.write(line + line)
            stdout.flush()
            continue
        send_line(hello)
        if MODE == "hello-twice-later":  # the second while the harness waits for the first case
            time.sleep(0.2)
            send_line(hello)
        continue
    if MODE == "reduce-trap" and msg.get("op") == "reduce":
        # It declares reduce but must never be sent one (the cases it is given cannot be carried).
        sys.stderr.write("faulty: received a reduce request: %s\n" % json.dumps(msg))
        sys.stderr.flush()
        sys.exit(9)
    payloads = [read_exact(elements(i["shape"]) * 8) for i in msg["inputs"]]
    rid = msg["id"]
    shape = msg["inputs"][0]["shape"] if msg["inputs"] else []
    body = payloads[0] if payloads else b""
    if pending:
        stdout.write(pending)
        stdout.flush()
        pending = b""
    if MODE == "hello-twice-on-request" and rid == 1:  # a second hello in place of the first answer
        send_line({"protocol": "einfuzz-backend/1", "name": "faulty " + MODE, "dtypes": ["f64"]})
    if MODE == "hello-flood-on-request" and rid == 1:  # 500 of them, then the answer
        line = json.dumps({"protocol": "einfuzz-backend/1", "name": "faulty " + MODE, "dtypes": ["f64"]}).encode()
        stdout.write((line + b"\n") * 500)
        stdout.flush()
    if "boom" not in msg["pattern"]:
        send_line({"id": rid, "status": "ok", "shape": shape})
        stdout.write(body)
        stdout.flush()
        continue
    # The fault.
    if MODE == "crash":
        sys.stderr.write("faulty: about to crash\nfaulty: segfault now\n")
        sys.stderr.flush()
        os.kill(os.getpid(), signal.SIGSEGV)
    elif MODE == "exit":
        sys.stderr.write("faulty: giving up\n")
        sys.exit(3)
    elif MODE == "hang":
        time.sleep(3600)
    elif MODE == "wrong-id":
        send_line({"id": rid + 1, "status": "ok", "shape": shape})
        stdout.write(body)
        stdout.flush()
    elif MODE == "no-id":
        send_line({"status": "ok", "shape": shape})
        stdout.write(body)
        stdout.flush()
    elif MODE == "short":
        send_line({"id": rid, "status": "ok", "shape": shape})
        stdout.write(body[: len(body) // 2])
        stdout.flush()
        time.sleep(3600)
    elif MODE == "short-exit":
        send_line({"id": rid, "status": "ok", "shape": shape})
        stdout.write(body[: len(body) // 2])
        stdout.flush()
        sys.exit(0)
    elif MODE == "long":
        send_line({"id": rid, "status": "ok", "shape": shape})
        stdout.write(body + b"\x00" * 8)
        stdout.flush()
    elif MODE == "shape-bytes":
        # A shape that disagrees with the bytes: one element more announced than sent, then exit.
        send_line({"id": rid, "status": "ok", "shape": [elements(shape) + 1]})
        stdout.write(body)
        stdout.flush()
        sys.exit(0)
    elif MODE == "deep-rank":
        # A shape of 300000 zero lengths (a 600 kB line, under the 1 MiB line limit): no element,
        # within every size limit, beyond any answer's rank.
        stdout.write(b'{"id":%d,"status":"ok","shape":[' % rid + b",".join([b"0"] * 300000) + b"]}\n")
        stdout.flush()
    elif MODE == "garbage":
        stdout.write(b"{\"id\": 1, \"status\": \"ok\", \"shape\": [\n")
        stdout.flush()
    elif MODE == "not-object":
        send_line([rid, "ok"])
    elif MODE == "bad-status":
        send_line({"id": rid, "status": "maybe"})
    elif MODE == "huge":
        send_line({"id": rid, "status": "ok", "shape": [1 << 40, 1 << 40]})
        stdout.write(body)
        stdout.flush()
    elif MODE == "flood-stderr":
        chunk = b"x" * 1023 + b"\n"
        for _ in range(20 * 1024):  # 20 MiB
            sys.stderr.buffer.write(chunk)
        sys.stderr.buffer.write(b"faulty: last stderr line\n")
        sys.stderr.flush()
        send_line({"id": rid, "status": "ok", "shape": shape})
        stdout.write(body)
        stdout.flush()
    elif MODE == "flood-stderr-forever":
        while True:
            sys.stderr.buffer.write(b"y" * 4095 + b"\n")
    elif MODE == "flood-stdout":
        while True:
            stdout.write(b"z" * 65536)
    elif MODE == "non-utf8":
        stdout.write(b"{\"id\": %d, \"status\": \"error\", \"message\": \"\xff\xfe\"}\n" % rid)
        stdout.flush()
    elif MODE == "deep-json":
        stdout.write(b"[" * 100000 + b"\n")
        stdout.flush()
    elif MODE == "double":
        # Two complete answers to one request, each written (and flushed) as the others are.
        for _ in range(2):
            send_line({"id": rid, "status": "ok", "shape": shape})
            stdout.write(body)
            stdout.flush()
    elif MODE == "double-one-write":
        # The same, in one write: both answers are on the pipe before the first is read.
        one = json.dumps({"id": rid, "status": "ok", "shape": shape}).encode() + b"\n" + body
        stdout.write(one + one)
        stdout.flush()
    elif MODE == "huge-answer":
        # 2^24 elements (128 MiB of f64) announced for a 3-element output, and no payload.
        send_line({"id": rid, "status": "ok", "shape": [1 << 24]})
    elif MODE == "double-slow":
        # The second answer 0.3 s after the first, before the next request is read: after the
        # harness has read the first, and before the process reads its bye.
        one = json.dumps({"id": rid, "status": "ok", "shape": shape}).encode() + b"\n" + body
        stdout.write(one)
        stdout.flush()
        time.sleep(0.3)
        stdout.write(one)
        stdout.flush()
    elif MODE == "double-late":
        # The second answer is written only once the next request has arrived, so it can only be
        # seen in the place of that request's answer.
        one = json.dumps({"id": rid, "status": "ok", "shape": shape}).encode() + b"\n" + body
        stdout.write(one)
        stdout.flush()
        pending = one
    elif MODE == "error":
        send_line({"id": rid, "status": "error", "message": "faulty rejects", "code": "rankMismatch"})
    else:
        send_line({"id": rid, "status": "ok", "shape": shape})
        stdout.write(body)
        stdout.flush()
